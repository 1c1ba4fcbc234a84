'use strict';
// The Claude Code tools' settings, read once when the tools are made: timeouts and the output cap
// (with Claude Code's environment overrides), the shell, the environment, the sandbox policy and the
// permission rules. Bad settings are typed errors here, before any command runs.

const fs = require('node:fs');
const os = require('node:os');
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

/** A settings path as an absolute one: `~` is the home directory, a relative path is under `base`. */
function settingsPath(base, p) {
  return path.resolve(base, p.replace(/^~(?=$|\/)/, os.homedir()));
}

/**
 * Claude Code's `sandbox` settings (and srt's settings file, whose top level has the same
 * `network` and `filesystem`) as runtime sandbox options: `filesystem.allowWrite` adds writable
 * roots beside the project, `denyWrite`/`denyRead`/`allowRead` pass through, `network.allowUnixSockets`
 * becomes `unixSockets`. Domains cannot be allowed one by one yet: a list of them is refused with what
 * to do instead, never widened to the whole network.
 */
function fromClaudeSettings(s, hostCwd, prompts = false) {
  const options = {};
  const fsSettings = s.filesystem ?? {};
  if (typeof s.network === 'boolean') options.network = s.network;
  const net = typeof s.network === 'boolean' ? {} : s.network ?? {};
  if (typeof fsSettings !== 'object' || Array.isArray(fsSettings)) throw invalid(`sandbox.filesystem must be an object, but it is ${shared.describeType(fsSettings)}.`);
  if (typeof net !== 'object' || Array.isArray(net)) throw invalid(`sandbox.network must be an object or a boolean, but it is ${shared.describeType(net)}.`);
  const allowWrite = stringList('sandbox.filesystem.allowWrite', fsSettings.allowWrite);
  if (allowWrite.length) options.writableRoots = [hostCwd, ...allowWrite.map((p) => settingsPath(hostCwd, p))];
  for (const key of ['denyWrite', 'denyRead', 'allowRead']) {
    const list = stringList(`sandbox.filesystem.${key}`, fsSettings[key]);
    if (list.length) options[key] = list;
  }
  const sockets = stringList('sandbox.network.allowUnixSockets', net.allowUnixSockets);
  if (sockets.length) options.unixSockets = sockets.map((p) => settingsPath(hostCwd, p));
  // Network by domain, through the sandbox's proxy: only the names listed (srt's and Claude Code's
  // allowedDomains/deniedDomains), never widened to the whole network.
  const domains = stringList('sandbox.network.allowedDomains', net.allowedDomains);
  const denied = stringList('sandbox.network.deniedDomains', net.deniedDomains);
  const ports = net.allowLocalhost === undefined ? [] : net.allowLocalhost;
  if (!Array.isArray(ports) || ports.some((p) => !Number.isInteger(p))) throw invalid('sandbox.network.allowLocalhost must be an array of port numbers.');
  // With a host to ask, any network setting is the network by domain (names asked until allowed).
  const asked = prompts && (net.allowedDomains !== undefined || net.allowLocalhost !== undefined);
  if (domains.length || denied.length || asked) options.network = { allow: domains, deny: denied, allowLocalhost: ports };
  return options;
}

function isDirectory(p) {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** Glob characters Claude Code's path rules use. */
const GLOB = /[*?[\]{}]/;

/**
 * A path rule's path as Claude Code reads it: `//abs` absolute, `~/x` in the home directory, `/x`
 * beneath the project (the tools' cwd), anything else beneath the cwd too.
 */
function rulePath(spec, cwd) {
  if (spec.startsWith('//')) return spec.slice(1);
  // `/x` is beneath the project in a rule; `~` and relative paths read as in the sandbox settings.
  return settingsPath(cwd, spec.startsWith('/') ? spec.slice(1) : spec);
}

/** `dir/**` (or `dir/*`, or a plain path) as the directory or file it covers; null for other globs. */
function wholePath(p) {
  const trimmed = p.replace(/\/\*\*?$/, '');
  return GLOB.test(trimmed) ? null : trimmed || '/';
}

/**
 * Claude Code's permission rules, split by tool: `Bash(...)` rules go to the command gate; `Edit(...)`
 * and `Read(...)` rules shape the sandbox's file system as Claude Code's sandbox reads them (an Edit
 * allow is a writable path, an Edit deny a read-only one, a Read deny hidden, a Read allow brought
 * back); `WebFetch(domain:...)` rules do not open the sandbox's network (a fetch tool's permission is
 * not the shell's; say the domain in `sandbox.network.allowedDomains`); rules of other tools do not
 * concern the shell.
 */
function splitRules(rules, cwd) {
  const bash = { allow: [], ask: [], deny: [] };
  const files = { writable: [], denyWrite: [], denyRead: [], allowRead: [] };
  const unapplied = [];
  for (const kind of ['allow', 'ask', 'deny']) {
    for (const rule of rules[kind]) {
      const m = /^([A-Za-z][\w-]*)(?:\((.*)\))?$/s.exec(rule.trim());
      const tool = m ? m[1] : null;
      if (!m || tool === 'Bash') {
        bash[kind].push(rule);
        continue;
      }
      const spec = m[2];
      if ((tool === 'Edit' || tool === 'Write' || tool === 'Read') && spec !== undefined && spec !== '') {
        const p = rulePath(spec, cwd);
        const whole = wholePath(p);
        if (tool === 'Read' && kind === 'deny' && whole) files.denyRead.push(whole);
        else if (tool === 'Read' && kind === 'allow' && whole) files.allowRead.push(whole);
        else if (tool !== 'Read' && kind === 'deny') files.denyWrite.push(p);
        else if (tool !== 'Read' && kind === 'allow' && whole && isDirectory(whole)) files.writable.push(whole);
        else unapplied.push(rule);
        continue;
      }
      unapplied.push(rule);
    }
  }
  return { bash, files, unapplied };
}

/**
 * The sandbox policy: `sandbox: true`, `{...SandboxOptions, excludedCommands, allowUnsandboxedCommands,
 * autoAllowBashIfSandboxed, failIfUnavailable}`, or Claude Code's own `sandbox` settings (`enabled`,
 * `filesystem`, `network`, ...). The writable roots are fixed here, beneath the host's cwd: never the
 * model's `cd`.
 */
/** The settings file the tools were made from is the host's: a run may not rewrite it for the next
 *  tool set (`"sandbox": {"enabled": false}` and rules of its own). */
function withSettingsProtected(policy, settingsFile) {
  if (!policy || !settingsFile) return policy;
  return { ...policy, options: shared.protectHostFiles(policy.options, [settingsFile]) };
}

function sandboxPolicy(sandbox, hostCwd, files = { writable: [], denyWrite: [], denyRead: [], allowRead: [] }, prompts = false) {
  if (sandbox === undefined || sandbox === null || sandbox === false) return null;
  if (sandbox !== true && (typeof sandbox !== 'object' || Array.isArray(sandbox))) {
    throw invalid(`sandbox must be true, false or an object of sandbox options, but it is ${shared.describeType(sandbox)}.`);
  }
  const {
    excludedCommands,
    allowUnsandboxedCommands,
    autoAllowBashIfSandboxed,
    failIfUnavailable,
    enabled,
    filesystem,
    enableWeakerNestedSandbox,
    ...rest
  } = sandbox === true ? {} : sandbox;
  if (enabled === false) return null;
  for (const [name, v] of Object.entries({ allowUnsandboxedCommands, autoAllowBashIfSandboxed, failIfUnavailable, enabled })) {
    if (v !== undefined && typeof v !== 'boolean') throw invalid(`sandbox.${name} must be true or false, but it is ${shared.describeType(v)}.`);
  }
  // Claude Code's settings shape: network as an object, filesystem lists.
  const claude = filesystem !== undefined || (rest.network !== undefined && typeof rest.network === 'object' && rest.network !== null);
  const options = claude ? { ...rest, network: undefined, ...fromClaudeSettings({ filesystem, network: rest.network }, hostCwd, prompts) } : { ...rest };
  if (claude && options.network === undefined) delete options.network;
  const caps = require('../../native.js').loadNative().sandboxCapabilities();
  if (options.network && typeof options.network === 'object' && caps.enforceable && !caps.networkByDomain) {
    throw shared.typedError('ERR_SANDBOX_UNAVAILABLE', 'sandbox.network.allowedDomains needs the network by domain, which this host cannot enforce.');
  }
  if (!caps.enforceable) {
    const why = caps.problems.join('; ');
    // Claude Code runs commands unsandboxed where the sandbox cannot be had, unless told to fail.
    if (failIfUnavailable === true) throw shared.typedError('ERR_SANDBOX_UNAVAILABLE', `The sandbox was asked for (failIfUnavailable) but this host cannot make one: ${why}.`);
    if (failIfUnavailable === false) return null;
  }
  // Edit and Read permission rules shape the file system as Claude Code's sandbox reads them.
  // A host that answers network requests gets Claude Code's default: the network by domain, every
  // name asked until allowed (an explicit network setting stands).
  if (prompts && options.network === undefined && caps.networkByDomain) options.network = { allow: [], deny: [], allowLocalhost: [] };
  const roots = [...(Array.isArray(options.writableRoots) ? options.writableRoots : [hostCwd]), ...files.writable];
  for (const key of ['denyWrite', 'denyRead', 'allowRead']) {
    if (files[key].length) options[key] = [...(Array.isArray(options[key]) ? options[key] : []), ...files[key]];
  }
  return {
    options: shared.pinSandboxPaths({ ...options, writableRoots: roots }, hostCwd),
    // Claude Code's form: a command name or a prefix rule body (`docker`, `git push:*`, `npm run *`).
    excludedRules: stringList('sandbox.excludedCommands', excludedCommands).map((c) => (c.startsWith('Bash(') ? c : `Bash(${/[*:]/.test(c) ? c : `${c}:*`})`)),
    allowUnsandboxed: allowUnsandboxedCommands ?? true,
    // Sandboxed commands run without asking (deny and ask rules still apply); what runs outside the
    // sandbox takes the normal permission flow.
    autoAllow: autoAllowBashIfSandboxed === true,
  };
}

/**
 * A Claude Code settings file (`.claude/settings.json`: `{permissions, sandbox}`) or srt's settings
 * file (`{network, filesystem}` at the top), read as the options it stands for.
 */
function readSettingsFile(file) {
  let parsed;
  try {
    parsed = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    throw invalid(`settingsFile ${file} cannot be read as JSON: ${e.message}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw invalid(`settingsFile ${file} is not a JSON object.`);
  const srt = parsed.sandbox === undefined && (parsed.network !== undefined || parsed.filesystem !== undefined);
  return {
    permissions: parsed.permissions,
    sandbox: srt ? { enabled: true, network: parsed.network, filesystem: parsed.filesystem } : parsed.sandbox,
  };
}

const KNOWN = new Set([
  'cwd',
  'env',
  'permissions',
  'autoAllowReadOnly',
  'onPermissionRequest',
  'onRulesAdded',
  'onNetworkRequest',
  'onDomainsAllowed',
  'permissionTimeoutMs',
  'defaultTimeoutMs',
  'maxTimeoutMs',
  'maxOutputChars',
  'blockingBudgetMs',
  'progressAfterMs',
  'progressEveryMs',
  'onProgress',
  'sandbox',
  'settingsFile',
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
  if (options.settingsFile !== undefined && typeof options.settingsFile !== 'string') throw invalid(`settingsFile must be a path, but it is ${shared.describeType(options.settingsFile)}.`);
  // The options given win over the file's.
  const file = options.settingsFile ? readSettingsFile(path.resolve(cwd, options.settingsFile)) : {};
  const permissions = options.permissions ?? file.permissions ?? {};
  if (typeof permissions !== 'object' || Array.isArray(permissions)) {
    throw invalid(`permissions must be an object such as {"allow": ["Bash(npm test:*)"]}, but it is ${shared.describeType(permissions)}.`);
  }
  // Rules of other tools (Edit, Read, WebFetch, mcp__...) are Claude Code's too: split off, not refused.
  const { bash: rules, files, unapplied } = splitRules(
    {
      allow: stringList('permissions.allow', permissions.allow),
      ask: stringList('permissions.ask', permissions.ask),
      deny: stringList('permissions.deny', permissions.deny),
    },
    cwd,
  );
  // Allow rules are for the project: a command that runs (or cd's) elsewhere is asked, as the
  // package.json or Makefile there is not the one the rule was written for.
  const workingDirs = [cwd, ...stringList('permissions.additionalDirectories', permissions.additionalDirectories).map((d) => path.resolve(cwd, d))];
  // Malformed and over-broad rules (`Bash(sh:*)`, `Bash(sudo:*)`) are refused now, not at the first call.
  require('../../native.js').loadNative().checkPermissionRules('true', { ...rules, cwd });
  for (const fn of ['onPermissionRequest', 'onRulesAdded', 'onProgress', 'onNetworkRequest', 'onDomainsAllowed']) {
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
    onNetworkRequest: options.onNetworkRequest,
    onDomainsAllowed: options.onDomainsAllowed,
    permissionTimeoutMs: msSetting('permissionTimeoutMs', options.permissionTimeoutMs, null, 120000),
    defaultTimeoutMs,
    maxTimeoutMs,
    maxOutputChars: Math.max(1000, msSetting('maxOutputChars', options.maxOutputChars, 'BASH_MAX_OUTPUT_LENGTH', MAX_OUTPUT_CHARS)),
    blockingBudgetMs: msSetting('blockingBudgetMs', options.blockingBudgetMs, null, BLOCKING_BUDGET_MS),
    progressAfterMs: msSetting('progressAfterMs', options.progressAfterMs, null, 2000),
    progressEveryMs: Math.max(50, msSetting('progressEveryMs', options.progressEveryMs, null, 1000)),
    onProgress: options.onProgress,
    killGraceMs: options.killGraceMs,
    sandbox: withSettingsProtected(sandboxPolicy(options.sandbox ?? file.sandbox, cwd, files, typeof options.onNetworkRequest === 'function'), options.settingsFile ? path.resolve(cwd, options.settingsFile) : null),
    // Permission rules of other tools that change nothing of the shell's (WebFetch, mcp__..., globs the
    // sandbox cannot hide): kept so a host can say so.
    unappliedRules: unapplied,
    shell: pickShell(),
    env: { ...(options.env || {}), GIT_EDITOR: 'true', [AGENT_MARKER]: '1' },
    // Every tool set has a scope of its own: its sessions and its tracked directory.
    scopeKey: options.scopeKey ?? `claude-code:${process.pid}:${Math.random().toString(36).slice(2, 10)}`,
  };
}

module.exports = { readConfig, pickShell, AGENT_MARKER, DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS, MAX_OUTPUT_CHARS, BLOCKING_BUDGET_MS };
