'use strict';
// The `exec` tool, as OpenClaw B's agents call it: same parameters, defaults, clamps, texts and details.

const fs = require('node:fs');
const path = require('node:path');

const native = require('../native.js').loadNative();
const shared = require('./shared.js');
const { notifyExit, wantsExitNotice, sendEvent, wakeHeartbeat } = require('./notify.js');

function describeExecTool({ hasCronTool } = {}) {
  return [
    'Execute shell commands with background continuation for work that starts now. Use yieldMs/background to continue later via process tool. For long-running work started now, rely on automatic completion wake when it is enabled and the command emits output or fails; otherwise use process to confirm completion. Use process whenever you need logs, status, input, or intervention.',
    hasCronTool ? 'Do not use exec sleep or delay loops for reminders or deferred follow-ups; use cron instead.' : null,
    'Use pty=true for TTY-required commands (terminal UIs, coding agents).',
  ]
    .filter(Boolean)
    .join(' ');
}

/**
 * Tool profiles: `openclaw` (the default: OpenClaw's tools as of August-September 2026), `openclaw-2026-04`
 * (B, April 2026: its timeout text, workdir fallback, ignored unknown hosts and exit labels), and
 * `clawdis`, the January 2026 Clawdis docs' tool: named `bash`, a 20 s default yield, A's description and
 * A's pending cap (200000), with B's texts.
 */
const PROFILES = {
  openclaw: { name: 'exec', yieldMs: 10000, pendingMaxOutputChars: 30000, describe: describeExecTool },
  // OpenClaw as of April 2026 (B): its texts and checks where later OpenClaw changed them.
  'openclaw-2026-04': { name: 'exec', yieldMs: 10000, pendingMaxOutputChars: 30000, describe: describeExecTool, april: true },
  clawdis: {
    name: 'bash',
    yieldMs: 20000,
    pendingMaxOutputChars: 200000,
    describe: () =>
      'Execute shell commands with background continuation. Use yieldMs/background to continue later via process tool. Use pty=true for TTY-required commands (terminal UIs, coding agents).',
    april: true,
  },
};

function profileOf(defaults) {
  const name = defaults.profile ?? 'openclaw';
  const profile = PROFILES[name];
  if (!profile) throw new Error(`Unknown exec tool profile "${name}". Use "openclaw" (the default), "openclaw-2026-04" or "clawdis".`);
  return profile;
}

const parameters = (yieldDefault) => ({
  type: 'object',
  properties: {
    command: { type: 'string', description: 'Shell command to execute' },
    workdir: { type: 'string', description: 'Working directory (defaults to cwd)' },
    env: { type: 'object', additionalProperties: { type: 'string' } },
    yieldMs: { type: 'number', description: `Milliseconds to wait before backgrounding (default ${yieldDefault})` },
    background: { type: 'boolean', description: 'Run in background immediately' },
    timeout: {
      type: 'number',
      description:
        'Timeout in seconds (default 1800; use 0 to disable local/gateway timeout; use a large positive timeout for host=node)',
    },
    pty: {
      type: 'boolean',
      description: 'Run in a pseudo-terminal (PTY) when available (TTY-required CLIs, coding agents)',
    },
    elevated: { type: 'boolean', description: 'Run on the host with elevated permissions (if allowed)' },
    host: { type: 'string', description: 'Exec host/target (auto|sandbox|gateway|node).' },
    security: { type: 'string', description: 'Exec security mode (deny|allowlist|full).' },
    ask: { type: 'string', description: 'Exec ask mode (off|on-miss|always).' },
    node: { type: 'string', description: 'Node id/name for host=node.' },
  },
  required: ['command'],
});

/** OpenClaw's elevated modes: returns off, ask or full, or throws the multi-line gate error. */
function resolveElevated(defaults, requested, sandboxed) {
  const cfg = defaults.elevated || {};
  const enabled = cfg.enabled === true;
  const allowed = cfg.allowed === true;
  const level = cfg.defaultLevel;
  const defaultMode = level === 'full' ? 'full' : level === 'ask' || level === 'on' ? 'ask' : 'off';
  if (requested === true && !(enabled && allowed)) {
    const gates = [];
    if (!enabled) gates.push('enabled (tools.elevated.enabled / agents.list[].tools.elevated.enabled)');
    const provider = defaults.messageProvider || '<provider>';
    if (!allowed) {
      gates.push(`allowFrom (tools.elevated.allowFrom.${provider} / agents.list[].tools.elevated.allowFrom.${provider})`);
    }
    const lines = [
      `elevated is not available right now (runtime=${sandboxed ? 'sandboxed' : 'direct'}).`,
      `Failing gates: ${gates.join(', ')}`,
    ];
    if (defaults.messageProvider || defaults.sessionKey) {
      lines.push(`Context: provider=${defaults.messageProvider ?? ''} session=${defaults.sessionKey ?? ''}`);
    }
    lines.push(
      'Fix-it keys:',
      '- tools.elevated.enabled',
      `- tools.elevated.allowFrom.${provider}`,
      '- agents.list[].tools.elevated.enabled',
      `- agents.list[].tools.elevated.allowFrom.${provider}`,
    );
    throw new Error(lines.join('\n'));
  }
  if (requested === true) return defaultMode === 'full' ? 'full' : 'ask';
  if (requested === false) return 'off';
  return enabled && allowed ? defaultMode : 'off';
}

/** Where the run starts (the model's workdir, the tracked directory with `trackCwd`, the host's
 *  directory), the warnings for a directory that is gone, and whether the model's workdir was not a
 *  directory: the runtime's rule, not this adapter's. */
function resolveWorkdir(requested, defaults) {
  return native.resolveWorkdir({ workdir: requested, cwd: defaults.cwd, trackCwd: Boolean(defaults.trackCwd), scopeKey: defaults.scopeKey });
}

/**
 * Later OpenClaw's answer to a model's workdir that is not a directory (missing, a file, blank): a
 * failed result saying nothing was executed. Taken literally: relative paths are beneath the host's
 * cwd, and `~` is a name like any other.
 */
function unavailableWorkdir(requested) {
  return shared.textResult(
    `workdir "${requested}" is unavailable or not a directory: command was not executed. workdir is treated as a literal path; shell expansions such as "~" are not applied. Use an existing directory, omit an explicit workdir to use the default cwd, or update the configured default cwd.`,
    {
      status: 'failed',
      exitCode: null,
      exitSignal: null,
      failureKind: 'runtime-error',
      durationMs: 0,
      aggregated: '',
      timedOut: false,
      cwd: requested,
    },
  );
}

/** `pathPrepend`'s directories, trimmed, empty ones left out. */
function pathPrependOf(defaults) {
  return (defaults.pathPrepend || []).map((p) => String(p).trim()).filter(Boolean);
}

/** The tool's own variables; the model's `env` goes to the native host env policy separately. In a
 *  container this machine's PATH names nothing: `pathPrepend` goes before the container's own PATH
 *  (the container host's `pathPrepend`), as OpenClaw's sandbox does. */
function toolEnv(defaults, inContainer) {
  const env = { OPENCLAW_SHELL: 'exec', OPENCLAW_CLI: '1' };
  const prepend = pathPrependOf(defaults);
  if (prepend.length > 0 && !inContainer) {
    const seen = new Set();
    env.PATH = [...prepend, ...(process.env.PATH || '').split(path.delimiter)]
      .filter((p) => p && !seen.has(p) && seen.add(p))
      .join(path.delimiter);
  }
  return env;
}

const KEEP_RUNNING =
  'If it should keep running, start it with exec background=true or yieldMs so OpenClaw can register a pollable process session. Do not rely on shell backgrounding with a trailing &.';

function failureMessage(outcome, timeoutSec, { april, allowBackground }) {
  if (outcome.timedOut) {
    const after = timeoutSec ? ` after ${timeoutSec} seconds` : '';
    if (april) {
      return `Command timed out${after}. If this command is expected to take longer, re-run with a higher timeout (e.g., exec timeout=300). ${KEEP_RUNNING}`;
    }
    return [
      `Command timed out${after}. If this command is expected to take longer and is safe to repeat, re-run with a higher timeout (e.g., exec timeout=300), or timeout=0 for none.`,
      shared.TIMEOUT_GUIDANCE,
      allowBackground ? KEEP_RUNNING : null,
    ]
      .filter(Boolean)
      .join('\n\n');
  }
  return outcome.reason || 'Command failed';
}

/**
 * Why a run ended, as later OpenClaw's details name it: `exitReason` (exit, signal, overall-timeout,
 * manual-cancel, spawn-error) and, for failures, `failureKind` (shell-command-not-found,
 * shell-not-executable, overall-timeout, signal, aborted, runtime-error). agent-exec has no
 * no-output timeout: `noOutputTimedOut` is always false.
 */
function endingDetails(outcome) {
  const exitReason = shared.exitReasonOf(outcome);
  const details = { exitSignal: outcome.exitSignal ?? null, exitReason, noOutputTimedOut: false };
  if (outcome.status !== 'failed') return details;
  const failureKind = outcome.timedOut
    ? 'overall-timeout'
    : outcome.aborted || outcome.killed
      ? 'aborted'
      : outcome.exitSignal
        ? 'signal'
        : outcome.exitCode === 127
          ? 'shell-command-not-found'
          : outcome.exitCode === 126
            ? 'shell-not-executable'
            : 'runtime-error';
  return { ...details, failureKind };
}

/** What the sandbox refused, for the model: each operation, its path or call, and the rule. */
function sandboxNote(outcome) {
  const denials = outcome.sandbox?.denials ?? [];
  if (denials.length === 0) return '';
  const lines = denials.map((d) => `- ${d.operation} ${d.path ?? d.detail}: ${d.rule}${d.count > 1 ? ` (x${d.count})` : ''}`);
  return `\n\nSandbox refused:\n${lines.join('\n')}`;
}

/** The sandbox part of `details` for sandboxed runs. */
function sandboxDetails(outcome) {
  const s = outcome.sandbox;
  // A safe-bin run the gate let through on analysis alone is confined: details name how.
  const confinement = outcome.approval?.confinement ? { confinement: outcome.approval.confinement } : {};
  if (!s) return confinement;
  return { ...confinement, sandbox: { denials: s.denials, limitExceeded: s.limitExceeded, limitMessage: s.limitMessage, tmpDir: s.tmpDir } };
}

function withWarnings(warnings, text) {
  return warnings.length ? `${warnings.join('\n')}\n\n${text}` : text;
}

function formatApprovalPending({ id, host, nodeId, cwd, command, allowedDecisions }) {
  const slug = id.slice(0, 8);
  let fence = '```';
  while (command.includes(fence)) fence += '`';
  const always = allowedDecisions.includes('allow-always');
  const lines = [
    `Approval required (id ${slug}, full ${id}).`,
    `Host: ${host}`,
    ...(nodeId ? [`Node: ${nodeId}`] : []),
    `CWD: ${cwd || '(node default)'}`,
    'Command:',
    `${fence}sh`,
    command,
    fence,
    'Mode: foreground (interactive approvals available).',
    always
      ? 'Background mode requires pre-approved policy (allow-always or ask=off).'
      : 'Background mode requires pre-approved policy (ask=off).',
    `Reply with: /approve ${slug} ${always ? 'allow-once|allow-always|deny' : 'allow-once|deny'}`,
    ...(always ? [] : ['The effective approval policy requires approval every time, so Allow Always is unavailable.']),
    'If the short code is ambiguous, use the full id in /approve.',
  ];
  return lines.join('\n');
}

/** The sandbox's writable roots and read paths, fixed when the tool is made: the host's roots
 *  (relative ones beneath the host's cwd), or that cwd. Never the model's `workdir`, never a
 *  directory a run `cd`'d into (see `shared.pinSandboxPaths`). */
function pinnedSandbox(sandbox, hostCwd) {
  if (!sandbox) return null;
  return shared.pinSandboxPaths(sandbox, hostCwd);
}

/** The model-chosen directory, when it lies outside every writable root: the run can read there only. */
function outsideRoots(cwd, roots) {
  const real = (p) => {
    try {
      return fs.realpathSync(p);
    } catch {
      return path.resolve(p);
    }
  };
  const dir = real(cwd);
  const inside = roots.some((r) => {
    const root = real(String(r));
    return dir === root || dir.startsWith(root.endsWith(path.sep) ? root : root + path.sep);
  });
  return inside ? null : dir;
}

const HOSTS = ['auto', 'sandbox', 'gateway', 'node'];

/**
 * The model's parameters, checked before anything runs. Where OpenClaw B clamps or ignores a value the
 * result stays B's, with a warning line saying so; what B would misread is refused with a typed error.
 * Returns the command.
 */
function checkParams(params, warnings, april) {
  if (params === null || typeof params !== 'object' || Array.isArray(params)) {
    throw shared.typedError('ERR_INVALID_OPTION', `exec parameters must be an object such as {"command": "ls"}, but they are ${shared.describeType(params)}.`);
  }
  const { command } = params;
  if (command === undefined || command === null || command === '') throw shared.typedError('ERR_INVALID_COMMAND', 'Provide a command to start.');
  if (typeof command !== 'string') {
    throw shared.typedError('ERR_INVALID_COMMAND', `The command must be a string of shell code such as "ls -la", but it is ${shared.describeType(command)}.`);
  }
  if (params.env !== undefined && params.env !== null) {
    if (typeof params.env !== 'object' || Array.isArray(params.env)) {
      throw shared.typedError('ERR_INVALID_ENV', `env must be an object of string values such as {"FOO": "1"}, but it is ${shared.describeType(params.env)}.`);
    }
    for (const [k, v] of Object.entries(params.env)) {
      if (typeof v !== 'string') throw shared.typedError('ERR_INVALID_ENV', `env.${k} must be a string, but it is ${shared.describeType(v)}.`);
    }
  }
  const ignored = (name, value, what) => warnings.push(`Warning: ${name} ${JSON.stringify(value)} is not ${what}; it was ignored.`);
  if (params.workdir !== undefined && params.workdir !== null && typeof params.workdir !== 'string') ignored('workdir', params.workdir, 'a directory path');
  if (params.pty !== undefined && params.pty !== null && typeof params.pty !== 'boolean') ignored('pty', params.pty, 'true or false (no PTY)');
  if (params.background !== undefined && params.background !== null && typeof params.background !== 'boolean') ignored('background', params.background, 'true or false');
  if (april) {
    if (typeof params.host === 'string' && params.host.trim() && !HOSTS.includes(params.host.trim().toLowerCase())) {
      ignored('host', params.host, `one of ${HOSTS.join(', ')} (the configured host runs it)`);
    }
  } else if (params.host !== undefined && params.host !== null) {
    // Later OpenClaw refuses a host it does not know before anything else (thrown, as it does).
    if (typeof params.host !== 'string') {
      throw shared.typedError('ERR_INVALID_OPTION', `Invalid exec host value type ${typeof params.host}. Allowed values: ${HOSTS.join(', ')}.`);
    }
    if (params.host.trim() && !HOSTS.includes(params.host.trim().toLowerCase())) {
      throw shared.typedError('ERR_INVALID_OPTION', `Invalid exec host "${params.host}". Allowed values: ${HOSTS.join(', ')}.`);
    }
  }
  if (params.timeout !== undefined && params.timeout !== null) {
    const t = Number(params.timeout);
    if (!Number.isFinite(t)) ignored('timeout', params.timeout, 'a number of seconds (the default applies)');
    else if (t < 0) warnings.push(`Warning: timeout ${t} is below 0; the command runs without a timeout, as with timeout 0.`);
  }
  if (params.yieldMs !== undefined && params.yieldMs !== null && !Number.isFinite(Number(params.yieldMs))) {
    ignored('yieldMs', params.yieldMs, 'a number of milliseconds (the default applies)');
  }
  return command;
}

/** Later OpenClaw's result when an approval is needed and no approval client can be asked. */
function approvalUnavailable(command, cwd, warnings) {
  const text = [
    'Exec approval is required, but no interactive approval client is currently available.',
    'Approve it from the Web UI or terminal UI. Print the Control UI URL with `openclaw dashboard --no-open`, open it in a browser, then use the approval inbox. Then retry the command. You can usually leave execApprovals.approvers unset when owner config already identifies the approvers.',
  ].join('\n\n');
  return shared.textResult(withWarnings(warnings, text), {
    status: 'approval-unavailable',
    reason: 'no-approval-route',
    sentApproverDms: false,
    host: 'gateway',
    command,
    cwd,
    ...(warnings.length ? { warningText: warnings.join('\n') } : {}),
  });
}

/** Later OpenClaw's error when a cron run needed an approval that askFallback refused. */
function headlessDenial(summary, approval, defaults) {
  const file = summary.approvalsFile || defaults.approvalsFile || '~/.openclaw/exec-approvals.json';
  const modes = native.evaluateCommand('true', { ...approval });
  const e = new Error(
    [
      'exec denied: Automation runs cannot wait for interactive exec approval.',
      `Effective host exec policy: security=${modes.security} ask=${modes.ask} askFallback=${modes.askFallback}`,
      `Stricter values from tools.exec and ${file} both apply.`,
      'Fix one of these:',
      '- align both files to security="full" and ask="off" for trusted local automation',
      '- keep allowlist mode and add an explicit allowlist entry for this command',
      '- keep the Control UI or a macOS/iOS/Android app connected and answer the next run\'s approval card; Allow Always mints a standing grant',
      'Tip: run "openclaw doctor" and "openclaw approvals get --gateway" to inspect the effective policy.',
    ].join('\n'),
  );
  e.code = 'ERR_APPROVAL_UNAVAILABLE';
  return e;
}

/** The container host of a run: the tool set's container configuration, with `pathPrepend` from the
 *  tool's defaults unless the configuration names its own. */
function containerHost(config, defaults) {
  const prepend = pathPrependOf(defaults);
  return prepend.length > 0 && config.pathPrepend === undefined ? { ...config, pathPrepend: prepend } : config;
}

function createExecTool(defaults = {}) {
  const profile = profileOf(defaults);
  const allowBackground = defaults.allowBackground ?? true;
  const yieldDefault = shared.defaultYieldMs(defaults.backgroundMs, profile.yieldMs);
  // The approvals file this tool obeys (the elevated path reads it) is the host's, wherever it lies.
  const sandboxConfig = shared.protectHostFiles(
    pinnedSandbox(defaults.sandbox, path.resolve(defaults.cwd || process.cwd())),
    // (The default file, under $OPENCLAW_HOME or $HOME, is protected by the runtime itself.)
    [defaults.approvalsFile || ''],
  );
  // OpenClaw's sandbox host as it is there: a container of the agent's (a Docker Engine API). Given,
  // it is what host=sandbox (and auto) means; else agent-exec's own sandbox.
  const containerConfig = defaults.container ? { ...defaults.container } : null;
  if (containerConfig && sandboxConfig) {
    throw shared.typedError('ERR_INVALID_OPTION', 'createExecTool takes sandbox (agent-exec\'s own) or container (a Docker Engine API\'s), not both: each is what host=sandbox means.');
  }
  const sandboxHost = sandboxConfig || containerConfig;

  const april = profile.april === true;

  async function execute(toolCallId, params = {}, signal, onUpdate) {
    const warnings = [];
    const command = checkParams(params, warnings, april);
    if (!allowBackground && (params.background === true || typeof params.yieldMs === 'number')) {
      warnings.push('Warning: background execution is disabled; running synchronously.');
    }
    let yieldMs = null;
    if (allowBackground) {
      yieldMs = params.background === true ? 0 : shared.clamp(Number(params.yieldMs ?? yieldDefault), yieldDefault, 10, 120000);
    }

    // Host (OpenClaw B): auto is the sandbox when one is configured (agent-exec's own, from the
    // `sandbox` default), else the gateway, which runs here; node needs the host's hook.
    const requestedHost = typeof params.host === 'string' ? params.host.trim().toLowerCase() : undefined;
    const configuredHost = defaults.host ?? 'auto';
    let host = ['auto', 'sandbox', 'gateway', 'node'].includes(requestedHost) ? requestedHost : configuredHost;
    // With a sandbox configured, auto is the sandbox: the model may not leave it for the gateway or
    // a node (OpenClaw refuses both; `host: 'node'` ran unsandboxed and unasked on the host's hook).
    const overrideRefused = configuredHost === 'auto' ? (host === 'gateway' || host === 'node') && sandboxHost : host !== configuredHost;
    if (requestedHost && overrideRefused) {
      throw new Error(
        `exec host not allowed (requested ${host}; configured host is ${configuredHost}; set tools.exec.host=${host} to allow this override).`,
      );
    }
    if (host === 'auto') host = sandboxHost ? 'sandbox' : 'gateway';
    if (host === 'sandbox' && !sandboxHost) {
      throw new Error(
        'exec host=sandbox requires a sandbox runtime for this session.\nEnable sandbox mode (agents.defaults.sandbox.mode) or use host=auto/gateway/node.',
      );
    }
    const elevated = resolveElevated(defaults, params.elevated, host === 'sandbox');
    // Elevation leaves the sandbox for the gateway host, as in OpenClaw.
    if (elevated !== 'off' && host === 'sandbox') host = 'gateway';
    const sandboxed = host === 'sandbox';
    const inContainer = sandboxed && !!containerConfig;

    // The host's modes, only tightened by the call's (the runtime's rule).
    const modes = native.tightenApproval({ security: defaults.security, ask: defaults.ask }, { security: params.security, ask: params.ask });
    const security = elevated === 'full' ? 'full' : modes.security;
    const ask = elevated === 'full' ? 'off' : modes.ask;
    // Later OpenClaw: the /approve guard before the directory is looked at; a workdir that is not
    // there is a failed result (nothing runs), taken literally (no `~`), not a fallback to the cwd.
    if (!april) native.preflightCommand(command, path.resolve(defaults.cwd || process.cwd()), process.env.PATH, false);
    const where = resolveWorkdir(params.workdir, defaults);
    // The runtime ignores a blank workdir; later OpenClaw counts it as one that is not there.
    const blank = typeof params.workdir === 'string' && !params.workdir.trim();
    if (!april && (where.unavailable || blank)) return unavailableWorkdir(params.workdir);
    warnings.push(...where.warnings);
    const cwd = where.cwd;
    const env = toolEnv(defaults, inContainer);
    const readOnlyDir = sandboxed && sandboxConfig ? outsideRoots(cwd, sandboxConfig.writableRoots) : null;
    if (readOnlyDir) {
      warnings.push(`Warning: ${readOnlyDir} is outside the sandbox's writable roots (${sandboxConfig.writableRoots.join(', ')}); the command runs there read-only.`);
    }

    if (host === 'node') {
      if (typeof defaults.runOnNode !== 'function') {
        throw new Error('exec host=node needs a node host: pass createExecTool({ runOnNode }) to route runs to a paired node.');
      }
      native.checkModelEnv(params.env);
      native.preflightCommand(command, cwd, env.PATH, false);
      return defaults.runOnNode({ toolCallId, command, cwd, env: params.env || {}, node: params.node ?? defaults.node, timeoutSec: params.timeout, security, ask });
    }

    // B's script preflight: a python/node script with shell variable syntax in its code is refused
    // before it runs (throws, as B does). Later OpenClaw skips it where the host trusts every command
    // ("yolo": the gateway, security full, ask off); the /approve guard still holds.
    const yolo = !april && host === 'gateway' && security === 'full' && ask === 'off';
    native.preflightCommand(command, cwd, env.PATH, yolo ? false : undefined);

    const timeoutSec =
      params.timeout !== undefined && params.timeout !== null && Number.isFinite(Number(params.timeout))
        ? Number(params.timeout)
        : defaults.timeoutSec > 0
          ? defaults.timeoutSec
          : 1800;
    const timeoutMs = timeoutSec > 0 ? Math.round(timeoutSec * 1000) : 0;
    // Sandboxed runs skip exec approvals (OpenClaw B): the sandbox is the boundary.
    const approval =
      elevated === 'full' || sandboxed
        ? undefined
        : {
            security,
            ask,
            agentId: defaults.agentId,
            approvalsFile: defaults.approvalsFile,
            safeBins: defaults.safeBins ?? undefined,
            safeBinTrustedDirs: defaults.safeBinTrustedDirs,
            strictInlineEval: defaults.strictInlineEval === true || undefined,
            onApproval: defaults.onApproval,
          };
    // What one result's text may show; the runtime keeps a log file once the output passes it.
    const textBudget = shared.maxTextChars(defaults.maxTextChars);
    const base = {
      command,
      cwd,
      env,
      modelEnv: params.env,
      hostEnvPolicy: 'openclaw',
      pty: params.pty === true,
      timeoutMs,
      maxOutputChars: shared.maxOutputChars(),
      // A file to point at whenever the text is cut for the model's budget, not only at the cap.
      logAboveChars: textBudget,
      pendingMaxOutputChars: shared.pendingMaxOutputChars(profile.pendingMaxOutputChars),
      scopeKey: defaults.scopeKey,
      approval,
      sandbox: sandboxed && sandboxConfig ? sandboxConfig : undefined,
      host: inContainer ? { container: containerHost(containerConfig, defaults) } : undefined,
      trackCwd: defaults.trackCwd === true || undefined,
    };

    // Later OpenClaw: nobody to ask. A cron run lets askFallback decide and fails loudly when it
    // refuses (below); any other run gets the approval-unavailable result, and nothing runs.
    const noApprover = approval && !april && typeof defaults.onApproval !== 'function' && !defaults.deferApprovals;
    if (noApprover && defaults.trigger !== 'cron') {
      native.checkModelEnv(params.env);
      const ev = native.evaluateCommand(command, { ...approval, cwd, env: { PATH: env.PATH ?? process.env.PATH ?? '' } });
      if (ev.decision === 'ask') return approvalUnavailable(command, cwd, warnings);
    }

    if (approval && defaults.deferApprovals) {
      native.checkModelEnv(params.env);
      const ev = native.evaluateCommand(command, { ...approval, cwd, env: { PATH: env.PATH ?? process.env.PATH ?? '' } });
      if (ev.decision === 'deny') {
        return shared.textResult(withWarnings(warnings, `exec denied: ${ev.reason}`), { status: 'failed', exitCode: null, durationMs: 0, aggregated: '', timedOut: false, cwd });
      }
      if (ev.decision === 'ask') return deferred(toolCallId, base, ev, warnings);
    }

    let updates = typeof onUpdate === 'function';
    const startedAt = Date.now();
    let sessionId;
    let pid;
    let yielded = false;
    const outcome = await native.exec({
      ...base,
      yieldMs: yieldMs === null ? undefined : yieldMs,
      background: yieldMs === 0,
      signal,
      onOutput: updates
        ? (chunk) => {
            if (!updates) return;
            sessionId = chunk.sessionId;
            const tail = chunk.tail;
            onUpdate({
              content: [{ type: 'text', text: withWarnings(warnings, tail) }],
              details: { status: 'running', sessionId, pid, startedAt, cwd, tail },
            });
          }
        : undefined,
      // Only a run that may be announced needs its exit reported back.
      onExit: wantsExitNotice(defaults)
        ? (info) => {
            if (yielded) notifyExit(defaults, info.sessionId, command);
          }
        : undefined,
    });
    updates = false;
    if (noApprover && defaults.trigger === 'cron' && outcome.approval && !outcome.approval.allowed && outcome.approval.decidedBy === 'fallback') {
      throw headlessDenial(outcome.approval, approval, defaults);
    }
    sessionId = outcome.sessionId;
    pid = outcome.pid;
    warnings.push(...outcome.warnings);
    if (outcome.status === 'running') {
      yielded = true;
      if (wantsExitNotice(defaults) && native.getSession(outcome.sessionId)?.status !== 'running') {
        notifyExit(defaults, outcome.sessionId, command);
      }
      const actions = april ? 'list/poll/log/write/kill/clear/remove' : 'list/poll/log/write/send-keys/submit/paste/kill/clear/remove';
      const followUp = [
        `Use process (${actions}) for follow-up.`,
        // Later OpenClaw says when no wake will come, so the agent collects the result itself.
        !april && defaults.notifyOnExit === false
          ? 'Automatic completion wake is disabled (tools.exec.notifyOnExit=false). If the task needs this result, use poll with a timeout to collect it before ending the turn, unless another continuation is already arranged.'
          : null,
      ]
        .filter(Boolean)
        .join(' ');
      return shared.textResult(
        withWarnings(warnings, `Command still running (session ${outcome.sessionId}, pid ${outcome.pid || 'n/a'}). ${followUp}`),
        {
          status: 'running',
          sessionId: outcome.sessionId,
          pid: outcome.pid || undefined,
          startedAt,
          cwd,
          tail: outcome.tail,
          ...(april ? {} : { followUp }),
        },
      );
    }
    let aggregated = outcome.output.trim();
    // What the model reads: within its budget, naming the file with everything (details keep B's cap).
    const shown = () =>
      shared.budgetText(aggregated, textBudget, { totalChars: outcome.totalChars, outputFile: outcome.outputFile });
    // With trackCwd, a run that moved says where it ended, once, and details carry it.
    const moved = defaults.trackCwd && outcome.finalCwd && outcome.finalCwd !== cwd ? outcome.finalCwd : null;
    const movedNote = moved ? `\n\n(cwd is now ${moved})` : '';
    const finalCwd = moved ? { finalCwd: moved } : {};
    const ending = april ? {} : endingDetails(outcome);
    if (outcome.status === 'completed') {
      if (outcome.exitCode) {
        // Later OpenClaw says "(no output)" before the code when there was none.
        const body = aggregated || (april ? '' : '(no output)');
        aggregated = `${body}\n\n(Command exited with code ${outcome.exitCode})`.trim();
      }
      return shared.textResult(withWarnings(warnings, (shown() || '(no output)') + movedNote + sandboxNote(outcome)), {
        status: 'completed',
        exitCode: outcome.exitCode ?? 0,
        ...ending,
        durationMs: outcome.durationMs,
        aggregated,
        cwd,
        ...finalCwd,
        ...(outcome.outputFile ? { outputFile: outcome.outputFile } : {}),
        ...sandboxDetails(outcome),
      });
    }
    const message = failureMessage(outcome, timeoutMs ? timeoutSec : 0, { april, allowBackground });
    const reason = aggregated ? `${shown()}\n\n${message}` : message;
    return shared.textResult(withWarnings(warnings, reason + movedNote + sandboxNote(outcome)), {
      status: 'failed',
      exitCode: outcome.exitCode ?? null,
      ...ending,
      durationMs: outcome.durationMs,
      aggregated,
      timedOut: outcome.timedOut,
      cwd,
      ...finalCwd,
      ...(outcome.outputFile ? { outputFile: outcome.outputFile } : {}),
      ...sandboxDetails(outcome),
    });
  }

  /** B's approval-pending result; the run starts in the background once the handler decides. */
  function deferred(toolCallId, base, ev, warnings) {
    const expiresAtMs = Date.now() + 1800000;
    // allow-always is not offered where it would keep a shell, interpreter or runner (ev.allowAlways.withheld).
    const allowedDecisions = ev.ask === 'always' || ev.allowAlways?.withheld ? ['allow-once', 'deny'] : ['allow-once', 'allow-always', 'deny'];
    const id = require('node:crypto').randomUUID();
    const warningText = warnings.join('\n');
    const events = (text) => sendEvent(defaults, text, { contextKey: `exec:${id}` });
    native
      .exec({
        ...base,
        background: true,
        approval: { ...base.approval, timeoutMs: 1800000 },
        onExit: (info) => {
          const log = native.readLog(info.sessionId, { offset: 0 });
          const snippet = log.text.replace(/\s+/g, ' ').trim().slice(-400);
          events(`Exec finished (gateway id=${id}, session=${info.sessionId}, ${info.timedOut ? 'timeout' : `code ${info.exitCode ?? 0}`})${snippet ? `\n${snippet}` : ''}`);
          wakeHeartbeat(defaults);
        },
      })
      .then((r) => {
        if (r.approval && !r.approval.allowed) {
          events(`Exec denied (gateway id=${id}, ${r.approval.reason}): ${base.command}`);
          wakeHeartbeat(defaults);
        }
      })
      .catch((e) => events(`Exec denied (gateway id=${id}, spawn-failed): ${base.command}\n${e.message}`));
    return shared.textResult(
      withWarnings(warnings, formatApprovalPending({ id, host: 'gateway', cwd: base.cwd, command: base.command, allowedDecisions })),
      {
        status: 'approval-pending',
        approvalId: id,
        approvalSlug: id.slice(0, 8),
        expiresAtMs,
        host: 'gateway',
        command: base.command,
        cwd: base.cwd,
        allowedDecisions,
        ...(warningText ? { warningText } : {}),
      },
    );
  }

  return {
    name: profile.name,
    label: profile.name,
    get description() {
      return profile.describe({ agentId: defaults.agentId, hasCronTool: defaults.hasCronTool });
    },
    parameters: parameters(profile.yieldMs),
    execute,
  };
}

module.exports = { createExecTool, describeExecTool, formatApprovalPending };
