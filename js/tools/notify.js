'use strict';
// Exit notification for backgrounded runs, as OpenClaw B sends it to the agent's session.

const { isAprilProfile, endingLabel, TIMEOUT_GUIDANCE } = require('./shared.js');
const native = require('../native.js').loadNative();

/**
 * About the last `max` chars of `text`, starting at a line start (or, inside one long line, at a word
 * start), so a notice never begins mid-word.
 */
function lastLines(text, max) {
  const trimmed = text.trimEnd();
  if (trimmed.length <= max) return trimmed;
  const from = trimmed.length - max;
  if (trimmed[from - 1] === '\n') return trimmed.slice(from);
  const nl = trimmed.indexOf('\n', from);
  if (nl >= 0 && nl < trimmed.length - 1) return trimmed.slice(nl + 1);
  const space = trimmed.slice(from).search(/\s/);
  return space >= 0 ? trimmed.slice(from + space + 1) : trimmed.slice(from);
}

/** Exit notices need notifyOnExit (default on), a session key and somewhere to send them. */
function wantsExitNotice(defaults) {
  return defaults.notifyOnExit !== false && Boolean(defaults.sessionKey) && typeof defaults.onSystemEvent === 'function';
}

/**
 * Where the notice goes back to: the chat, thread and account the command came from (B's delivery
 * context). Fields the host did not give are left out.
 */
function deliveryContext(defaults) {
  const context = {
    channel: defaults.messageProvider,
    to: defaults.currentChannelId,
    accountId: defaults.accountId,
    threadId: defaults.currentThreadTs,
  };
  for (const k of Object.keys(context)) if (context[k] === undefined || context[k] === null || context[k] === '') delete context[k];
  return Object.keys(context).length > 0 ? context : undefined;
}

/**
 * B wakes a heartbeat for the notice's session only when the key is agent-scoped (`agent:...`); later
 * OpenClaw asks for it at once (`coalesceMs: 0`: no coalescing delay), as an event.
 */
function heartbeatRequest(defaults) {
  const sessionKey = defaults.sessionKey ?? '';
  const request = isAprilProfile(defaults) ? { reason: 'exec-event' } : { source: 'exec-event', intent: 'event', reason: 'exec-event', coalesceMs: 0 };
  return /^agent:/i.test(sessionKey) ? { ...request, sessionKey } : request;
}

/**
 * `Exec completed (<id8>, code 0) :: <snippet>` once per session, then a heartbeat request. The notice
 * carries command output, so it is untrusted: a host must never present it as an instruction.
 */
function notifyExit(defaults, sessionId, command) {
  if (!wantsExitNotice(defaults)) return;
  const info = native.getSession(sessionId);
  if (!info || info.status === 'running') return;
  // Once per session: the flag lives on the session and goes with it.
  if (!native.claimExitNotice(sessionId)) return;
  const output = info.tail.replace(/\s+/g, ' ').trim();
  if (info.status === 'completed' && !info.exitCode && !output && !defaults.notifyOnExitEmptySuccess) return;
  let snippet = lastLines(info.tail, 400).replace(/\s+/g, ' ').trim();
  if (snippet.length > 180) snippet = `${snippet.slice(0, 179)}…`;
  // A kill the agent asked for is not a failure of the command's own.
  const status = info.killed ? 'killed' : info.status;
  const guidance = !isAprilProfile(defaults) && info.timedOut ? `\n\n${TIMEOUT_GUIDANCE}` : '';
  const text = `Exec ${status} (${sessionId.slice(0, 8)}, ${endingLabel(info.exitSignal, info.exitCode, isAprilProfile(defaults))})${snippet ? ` :: ${snippet}` : ''}${guidance}`;
  sendEvent(defaults, text, { command });
  wakeHeartbeat(defaults);
}

/**
 * A system event about a run, as B enqueues it: untrusted (it carries command text or output, which the
 * model must never take as an instruction), with the delivery context of the chat it came from.
 */
function sendEvent(defaults, text, extra = {}) {
  if (typeof defaults.onSystemEvent !== 'function') return;
  const event = { sessionKey: defaults.sessionKey, ...extra, trusted: false };
  const delivery = deliveryContext(defaults);
  if (delivery) event.deliveryContext = delivery;
  defaults.onSystemEvent(text, event);
}

function wakeHeartbeat(defaults) {
  if (typeof defaults.requestHeartbeat !== 'function') return;
  defaults.requestHeartbeat(heartbeatRequest(defaults));
}

module.exports = { notifyExit, wantsExitNotice, sendEvent, wakeHeartbeat };
