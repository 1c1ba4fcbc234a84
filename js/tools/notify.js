'use strict';
// Exit notification for backgrounded runs, as OpenClaw B sends it to the agent's session.

const native = require('../native.js').loadNative();
const { exitLabel } = require('./shared.js');

const notified = new Set();

/** Exit notices need notifyOnExit (default on), a session key and somewhere to send them. */
function wantsExitNotice(defaults) {
  return defaults.notifyOnExit !== false && Boolean(defaults.sessionKey) && typeof defaults.onSystemEvent === 'function';
}

/** `Exec completed (<id8>, code 0) :: <snippet>` once per session, then a heartbeat request. */
function notifyExit(defaults, sessionId, command) {
  if (!wantsExitNotice(defaults)) return;
  if (notified.has(sessionId)) return;
  const info = native.listSessions().find((s) => s.sessionId === sessionId);
  if (!info || info.status === 'running') return;
  notified.add(sessionId);
  const output = info.tail.replace(/\s+/g, ' ').trim();
  if (info.status === 'completed' && !info.exitCode && !output && !defaults.notifyOnExitEmptySuccess) return;
  let snippet = output.slice(-400);
  if (snippet.length > 180) snippet = `${snippet.slice(0, 179)}…`;
  const text = `Exec ${info.status} (${sessionId.slice(0, 8)}, ${exitLabel(info.exitSignal, info.exitCode)})${snippet ? ` :: ${snippet}` : ''}`;
  defaults.onSystemEvent(text, { sessionKey: defaults.sessionKey, command });
  defaults.requestHeartbeat?.({ reason: 'exec-event', sessionKey: defaults.sessionKey });
}

module.exports = { notifyExit, wantsExitNotice };
