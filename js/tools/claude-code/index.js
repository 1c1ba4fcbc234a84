'use strict';
// Claude Code shaped terminal tools over the native runtime: `Bash`, `BashOutput`, `KillShell`, and the
// command classifiers a UI uses to fold search and read commands and to run read-only ones in parallel.

const native = require('../../native.js').loadNative();
const { readConfig } = require('./config.js');
const { createBashTool } = require('./bash-tool.js');
const { createBashOutputTool, createKillShellTool } = require('./background-tools.js');

/**
 * The three tools sharing one configuration and one scope (their sessions and their tracked working
 * directory). `permissions.allow` grows when the user answers allow-always; `onRulesAdded` hears of it.
 */
function createClaudeCodeTools(options = {}) {
  const cfg = readConfig(options);
  const bash = createBashTool(cfg);
  const bashOutput = createBashOutputTool(cfg);
  const killShell = createKillShellTool(cfg);
  return {
    bash,
    bashOutput,
    killShell,
    tools: [bash, bashOutput, killShell],
    /** The permission rules in force (allow-always answers included). */
    rules: () => ({ allow: [...cfg.rules.allow], ask: [...cfg.rules.ask], deny: [...cfg.rules.deny] }),
    /**
     * Permission rules of other tools that change nothing of the shell's (WebFetch, mcp__..., path
     * globs the sandbox cannot hide): for a host that wants to say so.
     */
    unappliedRules: () => [...cfg.unappliedRules],
    /** The directory the next command starts in. */
    cwd: () => native.resolveWorkdir({ cwd: cfg.cwd, trackCwd: true, scopeKey: cfg.scopeKey }).cwd,
    /** Kill and forget every session of this tool set (for a host that ends a conversation). */
    async dispose() {
      for (const s of native.listSessions({ scopeKey: cfg.scopeKey })) {
        await native.removeSession(s.sessionId, { scopeKey: cfg.scopeKey });
      }
    },
  };
}

/**
 * Whether a command only searches or reads (for folding its output in a UI): `isSearch` when a part
 * searches (grep, rg, find...), `isRead` when a part reads or lists (cat, head, ls...), and `collapsible`
 * when every part that does anything is one of those. A command that does not parse is neither.
 */
function isSearchOrReadCommand(command, options = {}) {
  const c = native.classifyCommand(String(command), options);
  const kinds = c.segments.map((s) => s.kind);
  return {
    isSearch: c.isSearchOrRead && kinds.includes('search'),
    isRead: c.isSearchOrRead && (kinds.includes('read') || kinds.includes('list')),
    collapsible: c.isSearchOrRead,
  };
}

/** Whether nothing in the command writes, deletes or runs other programs (safe to run in parallel). */
function isReadOnly(command, options = {}) {
  return native.classifyCommand(String(command), options).isReadOnly;
}

module.exports = { createClaudeCodeTools, isSearchOrReadCommand, isReadOnly };
