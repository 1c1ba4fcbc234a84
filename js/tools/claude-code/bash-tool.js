'use strict';
// `Bash`, as Claude Code's agents call it: {command, timeout, description, run_in_background,
// dangerouslyDisableSandbox}. One native `exec` per call; the permission flow, the sandbox, the
// working directory, the background hand-over and the output file are the runtime's. This file only
// decides the options of that call and words the result.

const native = require('../../native.js').loadNative();
const shared = require('../shared.js');
const texts = require('./texts.js');
const { progressReporter } = require('./progress.js');

function describeBash(cfg) {
  return [
    'Run a shell command and return its output. The working directory persists between calls (a `cd` carries over); environment changes do not.',
    `Optional timeout in milliseconds (default ${cfg.defaultTimeoutMs}, at most ${cfg.maxTimeoutMs}).`,
    cfg.blockingBudgetMs > 0
      ? `A command still running after ${texts.duration(cfg.blockingBudgetMs)} moves to the background and the result gives its ID; read it with BashOutput, stop it with KillShell.`
      : null,
    'Use run_in_background for servers and watchers; do not end a command with `&`.',
    `Output over ${cfg.maxOutputChars} characters is cut to its start and end, and the full output is kept in a file whose path the result gives.`,
    'Prefer dedicated search and read tools where you have them; quote paths with spaces.',
    cfg.sandbox
      ? 'Commands run in a sandbox: writes only inside the project and a private temp dir, no network. Set dangerouslyDisableSandbox only when a command failed because of the sandbox and the user agrees.'
      : null,
  ]
    .filter(Boolean)
    .join(' ');
}

const inputSchema = {
  type: 'object',
  properties: {
    command: { type: 'string', description: 'The command to run' },
    timeout: { type: 'number', description: 'Optional timeout in milliseconds' },
    description: {
      type: 'string',
      description:
        "What the command does, in active voice and 5-10 words, e.g. 'List files in the current directory', 'Install package dependencies', 'Run the unit tests'",
    },
    run_in_background: { type: 'boolean', description: 'Run the command in the background; read its output later with BashOutput' },
    dangerouslyDisableSandbox: {
      type: 'boolean',
      description: 'Run this command outside the sandbox. Only when it failed because of the sandbox and the policy allows unsandboxed commands.',
    },
  },
  required: ['command'],
  additionalProperties: false,
};

function invalid(message) {
  return shared.typedError('ERR_INVALID_OPTION', message);
}

/** The model's input, checked before anything runs. Returns the command and the timeout to apply. */
function checkInput(input, cfg, warnings) {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw invalid(`Bash input must be an object such as {"command": "ls"}, but it is ${shared.describeType(input)}.`);
  }
  const { command } = input;
  if (typeof command !== 'string' || command.trim() === '') {
    throw shared.typedError('ERR_INVALID_COMMAND', command === undefined || command === '' ? 'Provide a command to run.' : `command must be a string of shell code such as "ls -la", but it is ${shared.describeType(command)}.`);
  }
  for (const flag of ['run_in_background', 'dangerouslyDisableSandbox']) {
    if (input[flag] !== undefined && input[flag] !== null && typeof input[flag] !== 'boolean') {
      throw invalid(`${flag} must be true or false, but it is ${shared.describeType(input[flag])}.`);
    }
  }
  if (input.description !== undefined && input.description !== null && typeof input.description !== 'string') {
    throw invalid(`description must be a string, but it is ${shared.describeType(input.description)}.`);
  }
  let timeoutMs = cfg.defaultTimeoutMs;
  if (input.timeout !== undefined && input.timeout !== null) {
    if (typeof input.timeout !== 'number' || !Number.isFinite(input.timeout) || input.timeout <= 0) {
      throw invalid(`timeout must be a positive number of milliseconds (at most ${cfg.maxTimeoutMs}), but it is ${typeof input.timeout === 'number' ? input.timeout : shared.describeType(input.timeout)}.`);
    }
    timeoutMs = Math.floor(input.timeout);
    if (timeoutMs > cfg.maxTimeoutMs) {
      warnings.push(`Note: timeout ${timeoutMs} ms is above the maximum; ${cfg.maxTimeoutMs} ms applies.`);
      timeoutMs = cfg.maxTimeoutMs;
    }
  }
  return { command, timeoutMs };
}

/** Whether this call runs sandboxed, or a refusal text when it asks for what the policy forbids. */
function sandboxFor(command, input, cfg) {
  if (!cfg.sandbox) return { options: undefined };
  if (input.dangerouslyDisableSandbox === true) {
    if (!cfg.sandbox.allowUnsandboxed) return { refused: texts.SANDBOX_OVERRIDE_REFUSED };
    return { options: undefined };
  }
  if (cfg.sandbox.excludedRules.length > 0) {
    const excluded = native.checkPermissionRules(command, { allow: cfg.sandbox.excludedRules, cwd: cfg.cwd }).verdict === 'allow';
    if (excluded) return { options: undefined, excluded: true };
  }
  return { options: cfg.sandbox.options };
}

/**
 * The sandbox options of one call. With the network by domain, a name no pattern decides is put to
 * the host's `onNetworkRequest` (Claude Code's "Network request outside of sandbox": yes, yes and don't
 * ask again for the host, no); "don't ask again" adds the name to the tool set's allowed domains for
 * every later command and tells `onDomainsAllowed`, so a host can keep it in its settings. Without the
 * callback such names are refused, as before.
 */
function withNetworkPrompt(options, cfg, call) {
  const net = options?.network;
  if (!net || typeof net !== 'object' || typeof cfg.onNetworkRequest !== 'function') return options;
  const onRequest = async ({ host, port }) => {
    const answer = normaliseAnswer(await cfg.onNetworkRequest({ host, port, ...call }));
    if (answer === 'allow-always' && !net.allow.includes(host)) {
      // The tool set's own copy: later commands reach the name unasked.
      net.allow.push(host);
      if (typeof cfg.onDomainsAllowed === 'function') await cfg.onDomainsAllowed([host]);
    }
    return answer;
  };
  return { ...options, network: { ...net, allow: [...net.allow], onRequest } };
}

/** The answer of the host's `onPermissionRequest`, as the runtime's gate takes it. */
function normaliseAnswer(answer) {
  const value = answer && typeof answer === 'object' ? answer.decision ?? answer.behavior : answer;
  if (value === 'allow' || value === 'allow-once') return 'allow-once';
  if (value === 'allow-always') return 'allow-always';
  return 'deny';
}

/**
 * The approval policy of one call. With autoAllowBashIfSandboxed, a command that runs sandboxed is
 * not asked: with no deny or ask rule there is nothing to check (the sandbox is the boundary); with
 * some, every segment is checked against them and what they cannot read is asked (fail closed). A
 * command that runs outside the sandbox takes the normal flow.
 */
function approvalFor(sandbox, cfg, onApproval) {
  const normal = { rules: cfg.rules, workingDirs: cfg.workingDirs, allowReadOnly: cfg.autoAllowReadOnly, onApproval, timeoutMs: cfg.permissionTimeoutMs };
  if (!sandbox.options || !cfg.sandbox.autoAllow) return normal;
  if (cfg.rules.deny.length === 0 && cfg.rules.ask.length === 0) return undefined;
  return { ...normal, rules: { ...cfg.rules, allow: [...cfg.rules.allow, 'Bash(*)'] } };
}

function createBashTool(cfg) {
  async function execute(toolUseId, input, signal, onProgress) {
    const warnings = [];
    const { command, timeoutMs } = checkInput(input, cfg, warnings);
    const sandbox = sandboxFor(command, input, cfg);
    if (sandbox.refused) return { content: [{ type: 'text', text: sandbox.refused }], isError: true, details: { status: 'refused' } };

    const where = native.resolveWorkdir({ cwd: cfg.cwd, trackCwd: true, scopeKey: cfg.scopeKey });
    warnings.push(...where.warnings);

    let askedWithoutHandler = false;
    const onApproval = async (request) => {
      if (typeof cfg.onPermissionRequest !== 'function') {
        askedWithoutHandler = true;
        return 'deny';
      }
      const suggestions = request.suggestions.filter((rule) => !cfg.rules.allow.includes(rule));
      const answer = await cfg.onPermissionRequest({
        toolUseId,
        command,
        description: typeof input.description === 'string' ? input.description : undefined,
        cwd: request.cwd,
        reason: request.reason,
        sandboxed: Boolean(sandbox.options),
        suggestions,
      });
      return normaliseAnswer(answer);
    };

    const background = input.run_in_background === true;
    // Past the blocking budget a foreground command moves to the background, unless it will have
    // timed out by then anyway.
    const budget = !background && cfg.blockingBudgetMs > 0 && timeoutMs > cfg.blockingBudgetMs ? cfg.blockingBudgetMs : null;
    const report = typeof onProgress === 'function' ? onProgress : cfg.onProgress;
    const progress = progressReporter({ report: background ? null : report, afterMs: cfg.progressAfterMs, everyMs: cfg.progressEveryMs });

    let outcome;
    try {
      outcome = await native.exec({
        command,
        cwd: where.cwd,
        trackCwd: true,
        scopeKey: cfg.scopeKey,
        shell: cfg.shell,
        env: cfg.env,
        // A background command lives until it ends or is killed (and dies with the host).
        timeoutMs: background ? 0 : timeoutMs,
        killGraceMs: cfg.killGraceMs,
        // The runtime keeps up to its own cap; the text shows `maxOutputChars` of it, and the log
        // file exists from the first byte for anything that may go on in the background.
        logAboveChars: background || budget ? 0 : cfg.maxOutputChars,
        background,
        yieldMs: budget ?? undefined,
        signal,
        onOutput: report && !background ? progress.onOutput : undefined,
        sandbox: withNetworkPrompt(sandbox.options, cfg, { toolUseId, command }),
        approval: approvalFor(sandbox, cfg, onApproval),
      });
    } finally {
      progress.stop();
    }

    const approval = outcome.approval;
    if (approval && !approval.allowed) {
      const text = askedWithoutHandler
        ? 'This command needs permission and no one can be asked (the host gave no onPermissionRequest). It was not run.'
        : texts.denied(outcome);
      return { content: [{ type: 'text', text }], isError: true, details: { status: 'denied', approval } };
    }
    const added = [];
    if (approval?.answer === 'allow-always') {
      for (const rule of approval.suggestions) {
        if (!cfg.rules.allow.includes(rule)) {
          cfg.rules.allow.push(rule);
          added.push(rule);
        }
      }
      if (added.length && typeof cfg.onRulesAdded === 'function') await cfg.onRulesAdded(added);
    }

    const details = {
      status: outcome.status,
      exitCode: outcome.exitCode,
      exitSignal: outcome.exitSignal,
      timedOut: outcome.timedOut,
      interrupted: outcome.aborted,
      durationMs: outcome.durationMs,
      cwd: outcome.finalCwd ?? outcome.cwd,
      // A read-only command allowed without asking runs in a read-only sandbox (the gate's
      // confinement); `confinement` says so, or that this host could not make one.
      sandboxed: Boolean(sandbox.options) || approval?.confinement === 'read-only-sandbox',
      confinement: approval?.confinement,
      approval,
      rulesAdded: added,
    };
    const notes = warnings.length ? `${warnings.join('\n')}\n` : '';
    if (outcome.status === 'running') {
      const text = texts.movedToBackground(outcome, { budgetMs: cfg.blockingBudgetMs, requested: background });
      return { content: [{ type: 'text', text: notes + text }], isError: false, details: { ...details, backgroundId: outcome.sessionId, outputFile: outcome.outputFile } };
    }
    const { text, cut } = texts.finished(outcome, { max: cfg.maxOutputChars, timeoutMs });
    const failed = Boolean(outcome.timedOut || outcome.aborted || outcome.exitSignal || outcome.exitCode);
    return {
      content: [{ type: 'text', text: notes + text + texts.sandboxRefusals(outcome) }],
      isError: failed,
      details: { ...details, truncated: cut, outputFile: cut ? outcome.outputFile : undefined },
    };
  }

  return {
    name: 'Bash',
    description: describeBash(cfg),
    inputSchema,
    parameters: inputSchema,
    execute,
  };
}

module.exports = { createBashTool, describeBash, inputSchema };
