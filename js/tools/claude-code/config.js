'use strict';
// The Claude Code tools' settings, read once when the tools are made: timeouts and the output cap
// (with Claude Code's environment overrides), the shell, the environment, the sandbox policy and the
// permission rules. Bad settings are typed errors here, before any command runs.

const fs = require('node:fs');
const path = require('node:path');

const shared = require('../shared.js');

const DEFAULT_TIMEOUT_MS = 120000;
const MAX_TIMEOUT_MS = 600000;
const MAX_OUTPUT_CHARS = 30000;
const BLOCKING_BUDGET_MS = 15000;

/** The variable that tells a command (and the scripts it runs) that an agent started it. */
const AGENT_MARKER = 'AGENT_EXEC_AGENT';

function invalid(message) {
  return shared.typedError('ERR_INVALID_OPTION', message);
}

/** A non-negative integer setting: the option, else the environment variable, else the default. */
function msSetting(name, value, envName, fallback) {
  if (value !== undefined && value !== null) {
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
      throw invalid(`${name} must be a number of milliseconds (0 or more), but it is ${shared.describeType(value)}${typeof value === 'number' ? ` (${value})` : ''}.`);
    }
    return Math.floor(value);
  }
  const fromEnv = envName ? shared.readEnvInt([envName]) : undefined;
  return fromEnv !== undefined && fromEnv >= 0 ? fromEnv : fallback;
}

function stringList(name, value) {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) {
    throw invalid(`${name} must be an array of strings such as ["Bash(npm run test:*)"], but it is ${shared.describeType(value)}.`);
  }
  return [...value];
}

function isExecutable(file) {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

function onPath(name, pathEnv) {
  for (const dir of String(pathEnv || '').split(path.delimiter)) {
    if (dir && isExecutable(path.join(dir, name))) return path.join(dir, name);
  }
  return null;
}

/**
 * The shell, as Claude Code picks it: `$AGENT_EXEC_SHELL`, then `$SHELL` when it is bash or zsh,
 * then bash on PATH, then sh (Alpine and other systems without bash). On Windows the runtime's own
 * choice (PowerShell, then cmd.exe) stands.
 */
function pickShell(env = process.env) {
  if (process.platform === 'win32') return undefined;
  if (env.AGENT_EXEC_SHELL && env.AGENT_EXEC_SHELL.trim()) return env.AGENT_EXEC_SHELL.trim();
  const login = (env.SHELL || '').trim();
  if (/(^|\/)(bash|zsh)$/.test(login) && (login.includes('/') ? isExecutable(login) : onPath(login, env.PATH))) return login;
  return onPath('bash', env.PATH) ? 'bash' : 'sh';
}

/**
 * The sandbox policy: `sandbox: true` or `{...SandboxOptions, excludedCommands, allowUnsandboxedCommands}`.
 * The writable roots are fixed here, beneath the host's cwd: never the model's `cd`.
 */
function sandboxPolicy(sandbox, hostCwd) {
  if (sandbox === undefined || sandbox === null || sandbox === false) return null;
  if (sandbox !== true && (typeof sandbox !== 'object' || Array.isArray(sandbox))) {
    throw invalid(`sandbox must be true, false or an object of sandbox options, but it is ${shared.describeType(sandbox)}.`);
  }
  const { excludedCommands, allowUnsandboxedCommands, ...options } = sandbox === true ? {} : sandbox;
  if (allowUnsandboxedCommands !== undefined && typeof allowUnsandboxedCommands !== 'boolean') {
    throw invalid(`sandbox.allowUnsandboxedCommands must be true or false, but it is ${shared.describeType(allowUnsandboxedCommands)}.`);
  }
  const roots = Array.isArray(options.writableRoots) ? options.writableRoots : [hostCwd];
  return {
    options: { ...options, writableRoots: roots.map((r) => (typeof r === 'string' ? path.resolve(hostCwd, r) : r)) },
    // Claude Code's form: a command name or a prefix rule body (`docker`, `git push:*`, `npm run *`).
    excludedRules: stringList('sandbox.excludedCommands', excludedCommands).map((c) => (c.startsWith('Bash(') ? c : `Bash(${/[*:]/.test(c) ? c : `${c}:*`})`)),
    allowUnsandboxed: allowUnsandboxedCommands ?? true,
  };
}

const KNOWN = new Set([
  'cwd',
  'env',
  'permissions',
  'autoAllowReadOnly',
  'onPermissionRequest',
  'onRulesAdded',
  'permissionTimeoutMs',
  'defaultTimeoutMs',
  'maxTimeoutMs',
  'maxOutputChars',
  'blockingBudgetMs',
  'progressAfterMs',
  'progressEveryMs',
  'onProgress',
  'sandbox',
  'scopeKey',
  'killGraceMs',
]);

function readConfig(options = {}) {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw invalid(`createClaudeCodeTools takes an options object, but got ${shared.describeType(options)}.`);
  }
  for (const key of Object.keys(options)) {
    if (!KNOWN.has(key)) throw invalid(`Unknown option "${key}" for createClaudeCodeTools. Known options: ${[...KNOWN].join(', ')}.`);
  }
  const cwd = path.resolve(options.cwd ?? process.cwd());
  if (!fs.existsSync(cwd) || !fs.statSync(cwd).isDirectory()) throw shared.typedError('ERR_INVALID_CWD', `cwd ${cwd} is not a directory.`);
  const permissions = options.permissions ?? {};
  if (typeof permissions !== 'object' || Array.isArray(permissions)) {
    throw invalid(`permissions must be an object such as {"allow": ["Bash(npm test:*)"]}, but it is ${shared.describeType(permissions)}.`);
  }
  const rules = {
    allow: stringList('permissions.allow', permissions.allow),
    ask: stringList('permissions.ask', permissions.ask),
    deny: stringList('permissions.deny', permissions.deny),
  };
  // Allow rules are for the project: a command that runs (or cd's) elsewhere is asked, as the
  // package.json or Makefile there is not the one the rule was written for.
  const workingDirs = [cwd, ...stringList('permissions.additionalDirectories', permissions.additionalDirectories).map((d) => path.resolve(cwd, d))];
  // Malformed and over-broad rules (`Bash(sh:*)`, `Bash(sudo:*)`) are refused now, not at the first call.
  require('../../native.js').loadNative().checkPermissionRules('true', { ...rules, cwd });
  for (const fn of ['onPermissionRequest', 'onRulesAdded', 'onProgress']) {
    if (options[fn] !== undefined && typeof options[fn] !== 'function') throw invalid(`${fn} must be a function, but it is ${shared.describeType(options[fn])}.`);
  }
  if (options.env !== undefined && (options.env === null || typeof options.env !== 'object' || Array.isArray(options.env))) {
    throw shared.typedError('ERR_INVALID_ENV', `env must be an object of string values, but it is ${shared.describeType(options.env)}.`);
  }
  const maxTimeoutMs = msSetting('maxTimeoutMs', options.maxTimeoutMs, 'BASH_MAX_TIMEOUT_MS', MAX_TIMEOUT_MS);
  const defaultTimeoutMs = Math.min(msSetting('defaultTimeoutMs', options.defaultTimeoutMs, 'BASH_DEFAULT_TIMEOUT_MS', DEFAULT_TIMEOUT_MS), maxTimeoutMs);
  return {
    cwd,
    rules,
    workingDirs,
    autoAllowReadOnly: options.autoAllowReadOnly ?? true,
    onPermissionRequest: options.onPermissionRequest,
    onRulesAdded: options.onRulesAdded,
    permissionTimeoutMs: msSetting('permissionTimeoutMs', options.permissionTimeoutMs, null, 120000),
    defaultTimeoutMs,
    maxTimeoutMs,
    maxOutputChars: Math.max(1000, msSetting('maxOutputChars', options.maxOutputChars, 'BASH_MAX_OUTPUT_LENGTH', MAX_OUTPUT_CHARS)),
    blockingBudgetMs: msSetting('blockingBudgetMs', options.blockingBudgetMs, null, BLOCKING_BUDGET_MS),
    progressAfterMs: msSetting('progressAfterMs', options.progressAfterMs, null, 2000),
    progressEveryMs: Math.max(50, msSetting('progressEveryMs', options.progressEveryMs, null, 1000)),
    onProgress: options.onProgress,
    killGraceMs: options.killGraceMs,
    sandbox: sandboxPolicy(options.sandbox, cwd),
    shell: pickShell(),
    env: { ...(options.env || {}), GIT_EDITOR: 'true', [AGENT_MARKER]: '1' },
    // Every tool set has a scope of its own: its sessions and its tracked directory.
    scopeKey: options.scopeKey ?? `claude-code:${process.pid}:${Math.random().toString(36).slice(2, 10)}`,
  };
}

module.exports = { readConfig, pickShell, AGENT_MARKER, DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS, MAX_OUTPUT_CHARS, BLOCKING_BUDGET_MS };
