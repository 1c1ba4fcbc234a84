'use strict';
// What `agent-exec mcp` enforces, from its flags and an optional JSON config file (flags win): the
// working directory, the sandbox, and the approval policy (OpenClaw's allowlist kind or Claude Code's
// rule kind). Read once at start; a bad setting stops the server with a message before it serves.

const fs = require('node:fs');
const path = require('node:path');
const { parseArgs } = require('node:util');
const { pinSandboxPaths, protectHostFiles } = require('../tools/shared.js');

class ConfigError extends Error {}

/** The MCP server's own approvals file (the OpenClaw format), apart from OpenClaw's. */
const DEFAULT_APPROVALS_FILE = path.join(require('node:os').homedir(), '.agent-exec', 'mcp-exec-approvals.json');

const FLAGS = {
  config: { type: 'string' },
  cwd: { type: 'string' },
  sandbox: { type: 'boolean' },
  writable: { type: 'string', multiple: true },
  network: { type: 'boolean' },
  'deny-read': { type: 'string', multiple: true },
  'allow-read': { type: 'string', multiple: true },
  'deny-write': { type: 'string', multiple: true },
  'allow-domain': { type: 'string', multiple: true },
  'deny-domain': { type: 'string', multiple: true },
  security: { type: 'string' },
  ask: { type: 'string' },
  'ask-fallback': { type: 'string' },
  'approvals-file': { type: 'string' },
  agent: { type: 'string' },
  allow: { type: 'string', multiple: true },
  'ask-rule': { type: 'string', multiple: true },
  deny: { type: 'string', multiple: true },
  'allow-read-only': { type: 'boolean' },
  'approval-timeout': { type: 'string' },
  timeout: { type: 'string' },
  'max-output': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
};

const USAGE = `Usage: agent-exec mcp [options]

A stdio MCP server: tools run, poll, log, write, send_keys, kill and list over this machine's shell.
Every session it starts ends when it exits (its client disconnects, or it is killed).

  --config <file>          JSON: {cwd, sandbox, timeoutSec, maxOutputChars, approval: {security, ask,
                           askFallback, agentId, approvalsFile, safeBins, timeoutMs, rules: {allow, ask,
                           deny}, allowReadOnly}}; flags override it
  --cwd <dir>              where commands start (default: the server's cwd)
  --sandbox                run every command sandboxed (writes only under the cwd and a private temp dir)
  --writable <dir>         a writable root of the sandbox (repeatable; implies --sandbox)
  --network                let the sandbox use the network
  --deny-read <path>  --allow-read <path>  --deny-write <path|glob>
                           what the sandbox may not read (credential locations are hidden by default),
                           brings back, and keeps read-only in the roots (repeatable; imply --sandbox)
  --allow-domain <host>  --deny-domain <host>   the network by domain through the sandbox's proxy
                           (example.com, '*.example.com'; repeatable; imply --sandbox)
  --security <deny|allowlist|full>    default allowlist: commands not on the allowlist ask
  --ask <off|on-miss|always>          default on-miss
  --ask-fallback <deny|allowlist|full> what decides when nobody can be asked (default deny)
  --approvals-file <path>  --agent <id>   the approvals file (OpenClaw's format) and agent; default
                           ~/.agent-exec/mcp-exec-approvals.json, the server's own: pass
                           ~/.openclaw/exec-approvals.json to share OpenClaw's allowlist
  --allow <rule>  --ask-rule <rule>  --deny <rule>   Claude Code rules such as "Bash(npm test:*)"
                           (repeatable; any rule switches to the rule kind of policy)
  --allow-read-only        read-only commands run without asking (with rules, or alone: the rest asks)
  --approval-timeout <ms>  how long a person has to answer (default 120000)
  --timeout <seconds>      default lifetime of a run (default 1800, 0 = none)
  --max-output <chars>     characters of output a result shows (default 30000)

Asking: where the client supports elicitation, a command the policy does not allow is put to the user;
otherwise --ask-fallback decides (deny unless told otherwise). A client without elicitation therefore
runs only what the policy allows: give it --allow rules, --allow-read-only, or --ask-fallback.
`;

function oneOf(name, value, allowed) {
  if (value === undefined) return undefined;
  if (!allowed.includes(value)) throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got "${value}"`);
  return value;
}

function count(name, value) {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value === '' || !Number.isFinite(n) || n < 0) throw new ConfigError(`${name} needs a number of at least 0, got "${value}"`);
  return n;
}

function readFile(file) {
  let text;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new ConfigError(`the config file ${file} cannot be read: ${e.message}`);
  }
  try {
    const parsed = JSON.parse(text);
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('it is not a JSON object');
    return parsed;
  } catch (e) {
    throw new ConfigError(`the config file ${file} is not valid: ${e.message}`);
  }
}

/**
 * The policy judged once on a harmless command, so a bad rule or approvals file stops the server at
 * startup with its message instead of failing every later call for a model that cannot fix the flags.
 */
function checkPolicy(approval, cwd) {
  const native = require('../native.js').loadNative();
  try {
    native.evaluateCommand('true', { ...approval, cwd });
  } catch (e) {
    throw new ConfigError(`${e.code ? `[${e.code}] ` : ''}${e.message}`);
  }
}

/** The server's settings from its command-line arguments. Throws ConfigError with a usable message. */
function readServerConfig(args) {
  let values;
  try {
    ({ values } = parseArgs({ args, options: FLAGS, allowPositionals: false, strict: true }));
  } catch (e) {
    throw new ConfigError(e.message);
  }
  if (values.help) return { help: USAGE };
  const file = values.config ? readFile(path.resolve(values.config)) : {};
  const fileApproval = file.approval && typeof file.approval === 'object' ? file.approval : {};

  const cwd = path.resolve(values.cwd ?? file.cwd ?? process.cwd());
  if (!fs.existsSync(cwd) || !fs.statSync(cwd).isDirectory()) throw new ConfigError(`--cwd ${cwd} is not a directory`);

  let sandbox = file.sandbox ?? false;
  const fsFlags = values['deny-read'] || values['allow-read'] || values['deny-write'] || values['allow-domain'] || values['deny-domain'];
  if (values.sandbox || values.writable || values.network || fsFlags) sandbox = typeof sandbox === 'object' && sandbox ? { ...sandbox } : {};
  if (values['deny-read']) sandbox.denyRead = [...(sandbox.denyRead ?? []), ...values['deny-read']];
  if (values['allow-read']) sandbox.allowRead = [...(sandbox.allowRead ?? []), ...values['allow-read']];
  if (values['deny-write']) sandbox.denyWrite = [...(sandbox.denyWrite ?? []), ...values['deny-write']];
  if (values['allow-domain'] || values['deny-domain']) {
    if (values.network) throw new ConfigError('--network opens every host; --allow-domain opens only the names given: use one of them');
    sandbox.network = { allow: values['allow-domain'] ?? [], deny: values['deny-domain'] ?? [] };
  }
  if (values.writable) sandbox.writableRoots = values.writable.map((w) => path.resolve(cwd, w));
  if (values.network) sandbox.network = true;
  if (sandbox === true) sandbox = {};
  // Every path of the configuration is the host's, against the server's cwd: each run's cwd is the
  // model's (a relative root `.` with the model's `cwd: "/"` made the whole file system writable).
  if (sandbox) sandbox = pinSandboxPaths(sandbox, cwd);

  const rulesFromFile = fileApproval.rules && typeof fileApproval.rules === 'object' ? fileApproval.rules : null;
  const allowReadOnly = values['allow-read-only'] ?? fileApproval.allowReadOnly ?? false;
  // Read-only commands running unasked is a rule-kind policy: on its own it is one with no rules yet.
  const flagRules = values.allow || values['ask-rule'] || values.deny || allowReadOnly;
  const rules =
    rulesFromFile || flagRules
      ? {
          allow: [...(rulesFromFile?.allow ?? []), ...(values.allow ?? [])],
          ask: [...(rulesFromFile?.ask ?? []), ...(values['ask-rule'] ?? [])],
          deny: [...(rulesFromFile?.deny ?? []), ...(values.deny ?? [])],
        }
      : undefined;

  const approval = {
    security: oneOf('--security', values.security ?? fileApproval.security ?? 'allowlist', ['deny', 'allowlist', 'full']),
    ask: oneOf('--ask', values.ask ?? fileApproval.ask ?? 'on-miss', ['off', 'on-miss', 'always']),
    askFallback: oneOf('--ask-fallback', values['ask-fallback'] ?? fileApproval.askFallback ?? 'deny', ['deny', 'allowlist', 'full']),
    agentId: values.agent ?? fileApproval.agentId,
    // Its own file by default: an answer given to this server does not widen OpenClaw's allowlist
    // (~/.openclaw/exec-approvals.json) unless the user points it there.
    approvalsFile: values['approvals-file'] ? path.resolve(values['approvals-file']) : (fileApproval.approvalsFile ?? DEFAULT_APPROVALS_FILE),
    safeBins: fileApproval.safeBins,
    timeoutMs: count('--approval-timeout', values['approval-timeout'] ?? fileApproval.timeoutMs) ?? 120000,
    rules,
    allowReadOnly,
  };
  checkPolicy(approval, cwd);
  // The server's own config and approvals are the host's: a run under a root holding them could
  // otherwise turn the sandbox off for the next start, or allowlist what it likes.
  if (sandbox) {
    sandbox = protectHostFiles(sandbox, [values.config ? path.resolve(values.config) : '', approval.approvalsFile]);
  }

  const timeoutSec = count('--timeout', values.timeout ?? file.timeoutSec) ?? 1800;
  const maxOutputChars = Math.max(1000, count('--max-output', values['max-output'] ?? file.maxOutputChars) ?? 30000);
  return { cwd, sandbox: sandbox || undefined, approval, timeoutSec, maxOutputChars };
}

module.exports = { readServerConfig, ConfigError, USAGE, DEFAULT_APPROVALS_FILE };
