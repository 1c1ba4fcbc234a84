'use strict';
// OpenClaw B's environment policy for host runs: dangerous inherited variables are dropped, and a
// model-supplied env may not set PATH or the keys that change how programs load code.

const BLOCKED_KEYS = new Set([
  'NODE_OPTIONS',
  'NODE_PATH',
  'PYTHONPATH',
  'PYTHONHOME',
  'PYTHONSTARTUP',
  'PERL5LIB',
  'PERL5OPT',
  'RUBYLIB',
  'RUBYOPT',
  'BASH_ENV',
  'ENV',
  'ZDOTDIR',
  'PROMPT_COMMAND',
  'SHELL',
  'IFS',
  'SSLKEYLOGFILE',
  'GIT_SSH',
  'GIT_SSH_COMMAND',
  'GIT_EXEC_PATH',
  'GIT_CONFIG_GLOBAL',
  'GIT_CONFIG_SYSTEM',
  'GIT_CONFIG_PARAMETERS',
  'GIT_ASKPASS',
]);
const BLOCKED_PREFIXES = ['LD_', 'DYLD_', 'BASH_FUNC_'];
const PORTABLE_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;

function isBlocked(key) {
  const upper = key.toUpperCase();
  return BLOCKED_KEYS.has(upper) || BLOCKED_PREFIXES.some((p) => upper.startsWith(p));
}

/** The host environment without the variables a run must not inherit. */
function sanitizedHostEnv(source = process.env) {
  const out = {};
  for (const [k, v] of Object.entries(source)) {
    if (typeof v === 'string' && !isBlocked(k)) out[k] = v;
  }
  return out;
}

/** Throws OpenClaw's `Security Violation` errors for forbidden overrides. */
function validateOverrides(env) {
  if (!env) return;
  const keys = Object.keys(env);
  if (keys.some((k) => k.toUpperCase() === 'PATH')) {
    throw new Error("Security Violation: Custom 'PATH' variable is forbidden during host execution.");
  }
  const blocked = keys.filter(isBlocked).sort();
  if (blocked.length === 1) {
    throw new Error(`Security Violation: Environment variable '${blocked[0]}' is forbidden during host execution.`);
  }
  if (blocked.length > 1) {
    throw new Error(`Security Violation: blocked override keys: ${blocked.join(', ')}.`);
  }
  const nonPortable = keys.filter((k) => !PORTABLE_KEY.test(k)).sort();
  if (nonPortable.length > 0) {
    throw new Error(`Security Violation: invalid non-portable override keys: ${nonPortable.join(', ')}.`);
  }
}

module.exports = { sanitizedHostEnv, validateOverrides, isBlocked };
