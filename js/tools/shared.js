'use strict';
// What both tools share: OpenClaw's environment variables and clamps, result shapes, text helpers.

function readEnvInt(names) {
  for (const name of names) {
    const raw = process.env[name];
    if (raw === undefined || raw.trim() === '') continue;
    const n = Number.parseInt(raw, 10);
    return Number.isNaN(n) ? undefined : n;
  }
  return undefined;
}

/** OpenClaw's clamp: undefined or NaN gives the default, otherwise min..max. */
function clamp(value, fallback, min, max) {
  if (value === undefined || value === null || Number.isNaN(value)) return fallback;
  return Math.min(max, Math.max(min, value));
}

/** `PI_BASH_YIELD_MS` (10..120000, default 10000), or the tool default. */
function defaultYieldMs(backgroundMs, fallback = 10000) {
  return clamp(backgroundMs ?? readEnvInt(['PI_BASH_YIELD_MS']), fallback, 10, 120000);
}

/** `PI_BASH_MAX_OUTPUT_CHARS` (1000..200000, default 200000). */
function maxOutputChars() {
  return clamp(readEnvInt(['PI_BASH_MAX_OUTPUT_CHARS']), 200000, 1000, 200000);
}

/**
 * `OPENCLAW_BASH_PENDING_MAX_OUTPUT_CHARS`, or the `CLAWDBOT_` spelling (1000..200000, default 30000;
 * the Clawdis profile's default is its 200000).
 */
function pendingMaxOutputChars(fallback = 30000) {
  return clamp(
    readEnvInt(['OPENCLAW_BASH_PENDING_MAX_OUTPUT_CHARS', 'CLAWDBOT_BASH_PENDING_MAX_OUTPUT_CHARS']),
    fallback,
    1000,
    200000,
  );
}

/** `PI_BASH_JOB_TTL_MS`: falsy or NaN gives 30 minutes, otherwise 1 minute .. 3 hours. */
function jobTtlMs(value) {
  const v = value ?? readEnvInt(['PI_BASH_JOB_TTL_MS']);
  if (!v || Number.isNaN(v)) return 1800000;
  return Math.min(10800000, Math.max(60000, v));
}

/**
 * Idle time after which a running session with writable input is said to wait for input:
 * `inputWaitIdleMs`, or `OPENCLAW_PROCESS_INPUT_WAIT_IDLE_MS` (a whole number; 1000..600000, default
 * 15000).
 */
function inputWaitIdleMs(configured) {
  let value = configured;
  if (value === undefined || value === null) {
    const raw = process.env.OPENCLAW_PROCESS_INPUT_WAIT_IDLE_MS;
    value = raw !== undefined && /^\s*[+-]?\d+\s*$/.test(raw) ? Number.parseInt(raw, 10) : undefined;
  }
  return clamp(Number.isFinite(Number(value)) ? Math.floor(Number(value)) : undefined, 15000, 1000, 600000);
}

/** An Error with a stable `code`, as the native layer throws them. */
function typedError(code, message) {
  const e = new Error(message);
  e.code = code;
  return e;
}

/** What a value is, for error texts: "a number", "an array", "null". */
function describeType(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  const t = typeof value;
  return /^[aeiou]/.test(t) ? `an ${t}` : `a ${t}`;
}

/**
 * The foreground text budget: `AGENT_EXEC_MAX_TEXT_CHARS` or the tool's `maxTextChars` (1000..200000,
 * default 30000, about 8k tokens). `details.aggregated` keeps B's larger cap.
 */
function maxTextChars(configured) {
  return clamp(configured ?? readEnvInt(['AGENT_EXEC_MAX_TEXT_CHARS']), 30000, 1000, 200000);
}

const NATIVE_MARKER = /\n?\[\.\.\. (\d+) chars omitted \.\.\.\]\n/;

/** The start and the end of `text`, about `budget / 2` chars each, cut at line boundaries where near. */
function headAndTail(text, budget) {
  const half = Math.floor(budget / 2);
  let head = text.slice(0, half);
  const headEnd = head.lastIndexOf('\n');
  if (headEnd > half / 2) head = head.slice(0, headEnd + 1);
  let tail = text.slice(text.length - half);
  const tailStart = tail.indexOf('\n');
  if (tailStart >= 0 && tailStart < half / 2) tail = tail.slice(tailStart + 1);
  return { head, tail };
}

/**
 * `text` within `budget` chars: the head and the tail, cut at line boundaries, with a marker that says
 * how much was left out and names the file with all of it. A text the runtime already cut gets the
 * file named in its marker too.
 */
function budgetText(text, budget, { totalChars, outputFile } = {}) {
  const where = outputFile ? `; full output: ${outputFile}` : '';
  if (text.length <= budget) {
    return outputFile ? text.replace(NATIVE_MARKER, (m, n) => `${m.startsWith('\n') ? '\n' : ''}[... ${n} chars omitted${where} ...]\n`) : text;
  }
  const { head, tail } = headAndTail(text, budget);
  const total = Math.max(totalChars ?? 0, text.length);
  const omitted = total - head.length - tail.length;
  return `${head}${head.endsWith('\n') ? '' : '\n'}[... ${omitted} chars omitted${where} ...]\n${tail}`;
}

function textResult(text, details) {
  return { content: [{ type: 'text', text }], details };
}

function failure(text) {
  return textResult(text, { status: 'failed' });
}

/** `s` if it fits, else its start and end around `...` (never splitting a surrogate pair). */
function truncateMiddle(s, max) {
  const chars = Array.from(s);
  if (s.length <= max) return s;
  const half = Math.floor((max - 3) / 2);
  let head = '';
  for (const c of chars) {
    if (head.length + c.length > half) break;
    head += c;
  }
  let tail = '';
  for (let i = chars.length - 1; i >= 0; i--) {
    if (tail.length + chars[i].length > half) break;
    tail = chars[i] + tail;
  }
  return `${head}...${tail}`;
}

function stripQuotes(s) {
  if (s.length >= 2 && ((s.startsWith('"') && s.endsWith('"')) || (s.startsWith("'") && s.endsWith("'")))) {
    return s.slice(1, -1);
  }
  return s;
}

/** OpenClaw's derived session name: the verb and its first non-flag target. */
function deriveSessionName(command) {
  const tokens = (String(command).match(/(?:[^\s"']+|"(?:\\.|[^"])*"|'(?:\\.|[^'])*')+/g) || [])
    .map(stripQuotes)
    .filter(Boolean);
  if (tokens.length === 0) return undefined;
  const [verb, ...rest] = tokens;
  const target = rest.find((t) => !t.startsWith('-')) ?? rest[0];
  if (!target) return verb;
  return `${verb} ${truncateMiddle(stripQuotes(target), 48)}`;
}

/** OpenClaw B's compact durations: 500ms, 45s, 2m5s, 1h30m, 1d2h; 0 is n/a. */
function formatDurationCompact(ms) {
  if (!ms || ms <= 0) return 'n/a';
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${s % 60 ? `${s % 60}s` : ''}`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h}h${m % 60 ? `${m % 60}m` : ''}`;
  const d = Math.floor(h / 24);
  return `${d}d${h % 24 ? `${h % 24}h` : ''}`;
}

function exitLabel(exitSignal, exitCode) {
  return exitSignal ? `signal ${exitSignal}` : `code ${exitCode ?? 0}`;
}

/** Whether the tools keep B's (April 2026) texts: `openclaw-2026-04`, and `clawdis`, which has B's. */
function isAprilProfile(defaults) {
  return defaults.profile === 'openclaw-2026-04' || defaults.profile === 'clawdis';
}

/** Later OpenClaw's exit label: never a code 0 the run did not report. B's (`exitLabel`) under `april`. */
function endingLabel(exitSignal, exitCode, april = false) {
  if (april) return exitLabel(exitSignal, exitCode);
  if (exitSignal) return `signal ${exitSignal}`;
  return typeof exitCode === 'number' ? `code ${exitCode}` : 'unknown exit code';
}

/**
 * Why a run ended, as later OpenClaw's details name it (`exitReason`): from a session or an outcome
 * (`timedOut`, `killed`/`aborted`, `exitSignal`, `exitCode`).
 */
function exitReasonOf(s) {
  if (s.timedOut) return 'overall-timeout';
  if (s.killed || s.aborted) return 'manual-cancel';
  if (s.exitSignal) return 'signal';
  return typeof s.exitCode === 'number' ? 'exit' : 'spawn-error';
}

/** Appended to what a timeout ended (later OpenClaw): the kill does not undo what the command did. */
const TIMEOUT_GUIDANCE =
  'The command was terminated, but external side effects may already have completed. Verify the resulting state before retrying. Do not automatically rerun non-idempotent commands. Use a higher timeout only when the command is known to be safe to retry.';

/**
 * A tool's sandbox options with every path the host gave relative to its cwd made absolute against
 * that cwd, when the tool is made: the writable roots (none means the cwd itself), `denyRead` and
 * `allowRead`. The runtime reads relative paths against the cwd of each run, which for a tool is the
 * model's `workdir` or the directory the last run reported: `denyRead: ['.env']` with the next
 * command in `sub/` hid `sub/.env` and let `../.env` be read. `~` stays for the runtime; `denyWrite`'s
 * relative entries already apply in each writable root.
 */
function pinSandboxPaths(sandbox, hostCwd) {
  const path = require('node:path');
  const config = sandbox === true ? {} : { ...sandbox };
  const pin = (p) => (typeof p === 'string' && !p.startsWith('~') ? path.resolve(hostCwd, p) : p);
  config.writableRoots = (Array.isArray(config.writableRoots) ? config.writableRoots : [hostCwd]).map(pin);
  for (const key of ['denyRead', 'allowRead']) {
    if (Array.isArray(config[key])) config[key] = config[key].map(pin);
  }
  return config;
}

/**
 * The same sandbox options with `files` (the host's own configuration: an approvals file, a settings
 * file, a server config) added to `denyWrite`: a run under a root holding one could otherwise change
 * what the host obeys next (allowlist `*`, turn the sandbox off for the next start). `~` is the home.
 */
function protectHostFiles(sandbox, files) {
  const path = require('node:path');
  const os = require('node:os');
  const wanted = files
    .filter((f) => typeof f === 'string' && f.length > 0)
    .map((f) => path.resolve(f.replace(/^~(?=$|\/)/, os.homedir())));
  if (!sandbox || wanted.length === 0) return sandbox;
  const config = sandbox === true ? {} : { ...sandbox };
  const existing = Array.isArray(config.denyWrite) ? config.denyWrite : [];
  config.denyWrite = [...existing, ...wanted.filter((f) => !existing.includes(f))];
  return config;
}

module.exports = {
  pinSandboxPaths,
  protectHostFiles,
  readEnvInt,
  clamp,
  defaultYieldMs,
  maxOutputChars,
  pendingMaxOutputChars,
  jobTtlMs,
  inputWaitIdleMs,
  typedError,
  maxTextChars,
  headAndTail,
  budgetText,
  describeType,
  textResult,
  failure,
  truncateMiddle,
  deriveSessionName,
  formatDurationCompact,
  exitLabel,
  isAprilProfile,
  endingLabel,
  exitReasonOf,
  TIMEOUT_GUIDANCE,
};
