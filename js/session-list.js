'use strict';
// listSessions that stays flat with 10,000 live sessions: the native side reports what changed since the
// last call (sessionChanges), and this copy of the list applies it. Building 10,000 objects afresh costs
// tens of milliseconds (every property is a call into V8); applying no change costs a copy of an array.
//
// The objects handed out are shared between calls, so they are frozen: a caller that wants to edit one
// copies it first. The `runtimeMs` and `idleMs` of a running session read the clock when they are read.

const SCOPE_ALL = '\u0000all';

/** Running first, each group newest first; the id breaks ties so the order is the same on every call. */
function listOrder(a, b) {
  const ra = a.status === 'running' ? 0 : 1;
  const rb = b.status === 'running' ? 0 : 1;
  if (ra !== rb) return ra - rb;
  if (a.startedAt !== b.startedAt) return b.startedAt - a.startedAt;
  return a.sessionId < b.sessionId ? -1 : a.sessionId > b.sessionId ? 1 : 0;
}

/** A frozen copy-safe snapshot of one native SessionInfo. */
function snapshot(info) {
  if (info.status === 'running') {
    // Fixed at fetch time by the native side; a running session's runtime keeps growing.
    const fetchedAt = Date.now();
    const runtimeAtFetch = info.runtimeMs;
    Object.defineProperty(info, 'runtimeMs', {
      enumerable: true,
      get: () => runtimeAtFetch + (Date.now() - fetchedAt),
    });
    // So does the quiet since its last output (the session does not change while it is quiet).
    const quietSince = info.lastOutputAt ?? info.startedAt;
    Object.defineProperty(info, 'idleMs', {
      enumerable: true,
      get: () => Math.max(0, Date.now() - quietSince),
    });
  }
  return Object.freeze(info);
}

function createSessionList(native) {
  /** scope key -> { tick, byId: Map<id, SessionInfo>, ordered: SessionInfo[] | null } */
  const copies = new Map();

  function refresh(options) {
    const key = options && options.scopeKey !== undefined && options.scopeKey !== null ? String(options.scopeKey) : SCOPE_ALL;
    let copy = copies.get(key);
    // The native side validates the options (and throws its typed error) on every call.
    const changes = native.sessionChanges(copy ? copy.tick : 0, options);
    if (!copy || changes.full) {
      copy = { tick: 0, byId: new Map(), ordered: null };
      copies.set(key, copy);
    }
    for (const id of changes.removed) {
      if (copy.byId.delete(id)) copy.ordered = null;
    }
    for (const info of changes.changed) {
      copy.byId.set(info.sessionId, snapshot(info));
      copy.ordered = null;
    }
    copy.tick = changes.tick;
    return copy;
  }

  /** Background sessions (running and recently finished) visible in the scope: running first, newest first. */
  function listSessions(options) {
    const copy = refresh(options);
    if (copy.ordered === null) copy.ordered = Array.from(copy.byId.values()).sort(listOrder);
    return copy.ordered.slice();
  }

  return { listSessions };
}

let shared = null;

/** The one list every part of the package reads, over the loaded native addon. */
function sessionList() {
  if (shared === null) shared = createSessionList(require('./native.js').loadNative());
  return shared;
}

module.exports = { createSessionList, sessionList };
