'use strict';
// The MCP server's tools: their JSON schemas and what each call does, as plain async functions of
// (arguments, context) -> {content, isError}. Each is one runtime call; the texts say what happened
// and what to do next. Typed runtime errors come back in-band (isError) with their code.

const path = require('node:path');

const native = require('../native.js').loadNative();
const shared = require('../tools/shared.js');

const SESSION = { type: 'string', description: 'The session id a background run returned' };
/**
 * Quiet this long with writable input, a running session may be waiting for input: 15000 ms, or
 * `OPENCLAW_PROCESS_INPUT_WAIT_IDLE_MS` (1000..600000), as the OpenClaw process tool reads it.
 */
const INPUT_WAIT_IDLE_MS = shared.inputWaitIdleMs();

const TOOLS = [
  {
    name: 'run',
    description:
      'Run a shell command on this machine. Returns its output and exit code, or, when it is still running after yield_ms (or background is true), a session id to poll, write to or kill. The approval policy and sandbox are the server\'s.',
    inputSchema: {
      type: 'object',
      properties: {
        command: { type: 'string', description: 'Shell command line' },
        cwd: { type: 'string', description: "Working directory, relative to the server's (default: the server's)" },
        timeout_ms: { type: 'number', description: 'Total lifetime in ms, 0 for none (default: the server\'s, 30 minutes)' },
        yield_ms: { type: 'number', description: 'Wait this long for the command, then return a session id (default 10000)' },
        background: { type: 'boolean', description: 'Return a session id at once' },
        pty: { type: 'boolean', description: 'Run on a pseudo-terminal (for programs that need a TTY)' },
        stdin: {
          type: 'string',
          enum: ['closed', 'pipe'],
          description: 'closed: the command reads end-of-file at once; pipe: write to it with write (default: pipe for background runs, else closed)',
        },
      },
      required: ['command'],
      additionalProperties: false,
    },
  },
  {
    name: 'poll',
    description: 'New output of a session since the last poll, and whether it is still running. With timeout_ms, wait up to that long for the command to end.',
    inputSchema: {
      type: 'object',
      properties: { session_id: SESSION, timeout_ms: { type: 'number', description: 'Wait up to this many ms (0..120000) for exit' } },
      required: ['session_id'],
      additionalProperties: false,
    },
  },
  {
    name: 'log',
    description: "A window of a session's output by lines: offset and limit, or the last 200 lines.",
    inputSchema: {
      type: 'object',
      properties: { session_id: SESSION, offset: { type: 'number' }, limit: { type: 'number' } },
      required: ['session_id'],
      additionalProperties: false,
    },
  },
  {
    name: 'write',
    description: "Write text to a session's stdin (runs started with a PTY, or background runs); eof closes it after.",
    inputSchema: {
      type: 'object',
      properties: { session_id: SESSION, data: { type: 'string' }, eof: { type: 'boolean' } },
      required: ['session_id', 'data'],
      additionalProperties: false,
    },
  },
  {
    name: 'send_keys',
    description: 'Send keys to a PTY session: tokens such as "enter", "C-c", "up", "tab", or literal text.',
    inputSchema: {
      type: 'object',
      properties: { session_id: SESSION, keys: { type: 'array', items: { type: 'string' } }, literal: { type: 'string' } },
      required: ['session_id'],
      additionalProperties: false,
    },
  },
  {
    name: 'kill',
    description: 'End a session and every process it started (SIGTERM, a grace period, then SIGKILL).',
    inputSchema: { type: 'object', properties: { session_id: SESSION }, required: ['session_id'], additionalProperties: false },
  },
  {
    name: 'list',
    description: 'The sessions this server started: running first, then recently finished.',
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
  },
];

function text(t, isError = false) {
  return { content: [{ type: 'text', text: t }], isError };
}

function ending(r) {
  if (r.timedOut) return 'timed out';
  if (r.exitSignal) return `killed by ${r.exitSignal}`;
  return `exit code ${r.exitCode ?? 0}`;
}

/**
 * Why the approval gate did not let a command run, for the model (and the person reading along).
 * `couldAsk` says whether the client offered elicitation: without it nothing timed out, nobody was
 * there to ask, and what helps is a server flag, which the text names.
 */
function notRun(approval, { command, couldAsk, timeoutMs }) {
  if (approval.decidedBy === 'user') {
    if (approval.answer === 'deny') return 'Not run: the user denied it.';
    return `Not run: ${approval.reason}.`;
  }
  if (approval.decidedBy === 'fallback') {
    const fixes = [...ruleFlags(approval, command), '--allow-read-only (for commands that only read)', '--ask-fallback allowlist or full'];
    if (!couldAsk) {
      return `Not run: it needs approval, and this MCP client cannot ask the user (it does not offer elicitation). The server's --ask-fallback (deny) refused it. The person who starts the server can allow such commands with ${fixes.join(', ')}.`;
    }
    return `Not run: it needs approval and the user did not answer within ${Math.round(timeoutMs / 1000)} s; the server's --ask-fallback refused it. Ask the user, then run it again.`;
  }
  return `Not run: the server's policy refused it (${approval.reason}).`;
}

/** The --allow flags that would let `command` run (the narrowest rules), e.g. `--allow 'Bash(npm test:*)'`. */
function ruleFlags(approval, command) {
  let rules = approval.suggestions ?? [];
  if (rules.length === 0) {
    try {
      rules = native.checkPermissionRules(command, {}).suggestions;
    } catch {
      rules = [];
    }
  }
  return rules.length ? [rules.map((r) => `--allow '${r}'`).join(' ')] : [];
}

/** The runtime's typed errors name its JS API; over MCP the tools are what the model can use. */
function forModel(message) {
  return message.replace(/listSessions shows the current ones/g, 'the list tool shows the current ones');
}

/** Arguments a tool's schema does not name are refused (its additionalProperties: false), not ignored. */
function checkArguments(tool, args) {
  if (args === null || typeof args !== 'object' || Array.isArray(args)) {
    throw shared.typedError('ERR_INVALID_OPTION', `The arguments of ${tool.name} must be an object, but they are ${shared.describeType(args)}.`);
  }
  const known = Object.keys(tool.inputSchema.properties);
  for (const key of Object.keys(args)) {
    if (!known.includes(key)) {
      throw shared.typedError('ERR_INVALID_OPTION', `${tool.name} has no argument "${key}"; it takes ${known.length ? known.join(', ') : 'none'}. Nothing was run.`);
    }
  }
}

function number(args, name, { min = 0, max = Number.MAX_SAFE_INTEGER } = {}) {
  const v = args[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max) {
    throw shared.typedError('ERR_INVALID_OPTION', `${name} must be a number from ${min} to ${max}, but it is ${typeof v === 'number' ? v : shared.describeType(v)}.`);
  }
  return v;
}

function stdinMode(args) {
  if (args.stdin === undefined || args.stdin === null) return args.background === true ? 'pipe' : 'closed';
  if (args.stdin !== 'closed' && args.stdin !== 'pipe') {
    throw shared.typedError('ERR_INVALID_OPTION', `stdin must be "closed" or "pipe", but it is ${JSON.stringify(args.stdin)}.`);
  }
  return args.stdin;
}

function sessionId(args) {
  if (typeof args.session_id !== 'string' || !args.session_id) {
    throw shared.typedError('ERR_INVALID_OPTION', `session_id must be the id a run returned, but it is ${shared.describeType(args.session_id)}.`);
  }
  return args.session_id;
}

/**
 * The handlers, bound to the server's settings and `asker()`, which gives the function that asks the
 * user (or nothing, when the client cannot be asked: then the policy's askFallback decides).
 */
function toolHandlers(config, { asker }) {
  const budget = config.maxOutputChars;

  async function run(args, { signal } = {}) {
    const command = args.command;
    if (typeof command !== 'string' || command.trim() === '') {
      throw shared.typedError('ERR_INVALID_COMMAND', `command must be a non-empty string of shell code, but it is ${shared.describeType(command)}.`);
    }
    if (args.cwd !== undefined && typeof args.cwd !== 'string') throw shared.typedError('ERR_INVALID_OPTION', `cwd must be a path, but it is ${shared.describeType(args.cwd)}.`);
    const timeoutMs = number(args, 'timeout_ms') ?? config.timeoutSec * 1000;
    const yieldMs = number(args, 'yield_ms', { max: 600000 }) ?? 10000;
    const ask = asker();
    const outcome = await native.exec({
      command,
      cwd: args.cwd ? path.resolve(config.cwd, args.cwd) : config.cwd,
      timeoutMs,
      background: args.background === true,
      yieldMs: args.background === true ? undefined : yieldMs,
      pty: args.pty === true,
      stdin: stdinMode(args),
      logAboveChars: budget,
      sandbox: config.sandbox,
      approval: { ...config.approval, onApproval: ask },
      // The client's cancellation (notifications/cancelled) ends a foreground run's whole tree; a run
      // already handed back as a session stays one, listed, until killed.
      signal,
    });
    if (outcome.approval && !outcome.approval.allowed) {
      return text(notRun(outcome.approval, { command, couldAsk: Boolean(ask), timeoutMs: config.approval.timeoutMs }), true);
    }
    if (outcome.aborted) return text(`Cancelled: the command was stopped (with every process it started) after ${outcome.durationMs} ms.\n\n${outcome.output || '(no output)'}`, true);
    const output = shared.budgetText(outcome.output.replace(/\n+$/, ''), budget, outcome) || '(no output)';
    if (outcome.status === 'running') {
      return text(`Still running as session ${outcome.sessionId} (pid ${outcome.pid}). Poll it with poll {"session_id": "${outcome.sessionId}"}; stop it with kill.\n\n${output}`);
    }
    const failed = outcome.status === 'failed' || (outcome.exitCode ?? 0) !== 0;
    const refused = outcome.sandbox?.denials?.map((d) => `${d.operation} ${d.path ?? d.detail}`).join('; ');
    // A run that succeeded despite refusals (npm's ~/.npm cache, a netlink probe) should not read as a failure.
    const denials = refused ? (failed ? `\nThe sandbox refused: ${refused} (one of these may be why it failed)` : `\nThe command succeeded; the sandbox refused along the way, and the command coped: ${refused}`) : '';
    const took = outcome.durationMs < 1000 ? `${outcome.durationMs} ms` : `${(outcome.durationMs / 1000).toFixed(1)} s`;
    return text(`${output}\n\n[${ending(outcome)} after ${took}${outcome.reason ? `: ${outcome.reason}` : ''}]${denials}`, failed);
  }

  /**
   * A running session with writable input and no output for INPUT_WAIT_IDLE_MS may be waiting for input (the
   * runtime's idle time, as the OpenClaw process tool reads it): said in poll and marked in list.
   */
  function inputWait(info) {
    if (!info || info.status !== 'running' || !info.stdinWritable || (info.idleMs ?? 0) < INPUT_WAIT_IDLE_MS) return null;
    return `no output for ${shared.formatDurationCompact(info.idleMs)}; it may be waiting for input (write or send_keys)`;
  }

  async function poll(args) {
    const id = sessionId(args);
    const p = await native.pollSession(id, { timeoutMs: number(args, 'timeout_ms', { max: 120000 }) ?? 0 });
    const fresh = `${p.stdout}${p.stderr}`;
    const waiting = p.status === 'running' ? inputWait(native.getSession(id)) : null;
    const state = p.status !== 'running' ? `${p.status} (${ending(p)})` : waiting ? `running, ${waiting}` : 'running';
    const body = fresh ? shared.budgetText(fresh, budget, { outputFile: p.outputFile }) : '(no new output)';
    return text(`Session ${id}: ${state}.\n\n${body}`);
  }

  async function log(args) {
    const id = sessionId(args);
    const r = native.readLog(id, { offset: number(args, 'offset'), limit: number(args, 'limit', { min: 1 }) });
    return text(`${r.text || '(no output yet)'}${r.note ? `\n\n${r.note}` : ''}`);
  }

  async function write(args) {
    const id = sessionId(args);
    if (typeof args.data !== 'string') throw shared.typedError('ERR_INVALID_OPTION', `data must be a string, but it is ${shared.describeType(args.data)}.`);
    const n = await native.writeStdin(id, args.data, { eof: args.eof === true });
    return text(`Wrote ${n} bytes to session ${id}${args.eof === true ? ' (stdin closed)' : ''}.`);
  }

  async function sendKeys(args) {
    const id = sessionId(args);
    const r = await native.sendKeys(id, { keys: args.keys, literal: args.literal });
    const unknown = r.warnings.length ? ` ${r.warnings.join(' ')}` : '';
    return text(`Sent ${r.bytes} bytes to session ${id}.${unknown}`);
  }

  async function kill(args) {
    const id = sessionId(args);
    const r = await native.killSession(id);
    return text(r.survivors.length ? `Killed session ${id}; ${r.survivors.length} process(es) survived SIGKILL: ${r.survivors.join(', ')}.` : `Killed session ${id}.`, r.survivors.length > 0);
  }

  async function list() {
    const sessions = native.listSessions();
    if (sessions.length === 0) return text('No sessions.');
    const lines = sessions.map((s) => {
      const marker = s.status === 'running' && inputWait(s) ? ' [input-wait]' : '';
      return `${s.sessionId}  ${s.status.padEnd(9)}  ${shared.formatDurationCompact(s.runtimeMs).padStart(6)}  ${s.cwd}  ${s.command}${marker}`;
    });
    return text(lines.join('\n'));
  }

  return { run, poll, log, write, send_keys: sendKeys, kill, list };
}

/** One call, with runtime errors as in-band results the model can read. */
async function callTool(handlers, name, args, extra = {}) {
  const handler = handlers[name];
  const tool = TOOLS.find((t) => t.name === name);
  if (!handler || !tool) return text(`Unknown tool "${name}". Tools: ${Object.keys(handlers).join(', ')}.`, true);
  try {
    checkArguments(tool, args ?? {});
    return await handler(args ?? {}, { signal: extra.signal });
  } catch (e) {
    return text(`${e.code ? `[${e.code}] ` : ''}${forModel(e.message)}`, true);
  }
}

module.exports = { TOOLS, toolHandlers, callTool };
