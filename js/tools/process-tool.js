'use strict';
// The `process` tool, as OpenClaw B's agents call it: every action, text and details shape.

const native = require('../native.js').loadNative();
const shared = require('./shared.js');
const { sessionList } = require('../session-list.js');

/** OpenClaw's actions, in its order, then agent-exec's own (`screen`). */
const ACTIONS = ['list', 'poll', 'log', 'write', 'send-keys', 'submit', 'paste', 'kill', 'clear', 'remove', 'screen'];

/** How long a poll may wait: later OpenClaw caps it at 30 s (B at 120 s). */
const MAX_POLL_WAIT_MS = 30000;
const APRIL_MAX_POLL_WAIT_MS = 120000;

const RETENTION_NOTE = '[earlier output was discarded at the retention cap and cannot be recovered]\n\n';

/** A poll's `timeout`: a number or an integer string, floored and clamped to 0..max; anything else is 0. */
function pollWaitMs(timeout, max) {
  let n;
  if (typeof timeout === 'number' && Number.isFinite(timeout)) n = Math.floor(timeout);
  else if (typeof timeout === 'string' && /^[+-]?\d+$/.test(timeout.trim()) && Number.isSafeInteger(Number(timeout.trim()))) n = Number(timeout.trim());
  else return 0;
  return Math.min(max, Math.max(0, n));
}

/** An abort as fetch and Node throw them, with what the poll kept. */
function abortError() {
  const e = new Error('Poll aborted before reading output.');
  e.name = 'AbortError';
  e.code = 'ABORT_ERR';
  return e;
}

const parameters = {
  type: 'object',
  properties: {
    action: { type: 'string', enum: ACTIONS, description: `Process action (${ACTIONS.join('|')})` },
    sessionId: { type: 'string', description: 'Session id for actions other than list' },
    data: { type: 'string', description: 'Data to write for write' },
    keys: {
      type: 'array',
      items: {
        anyOf: [
          { type: 'string' },
          { type: 'object', properties: { literal: { type: 'string' } }, required: ['literal'] },
          { type: 'object', properties: { hex: { type: 'string' } }, required: ['hex'] },
        ],
      },
      description:
        'Key tokens to send for send-keys, sent after literal and hex; an item may be {"literal": "text"} or {"hex": "1b"} to send text or a byte at that point (e.g. ["i", {"literal": "text"}, "Escape"])',
    },
    hex: { type: 'array', items: { type: 'string' }, description: 'Hex bytes to send for send-keys, sent after literal and before keys' },
    literal: { type: 'string', description: 'Literal string for send-keys, sent first (before hex and keys)' },
    text: { type: 'string', description: 'Text to paste for paste' },
    bracketed: { type: 'boolean', description: 'Wrap paste in bracketed mode' },
    eof: { type: 'boolean', description: 'Close stdin after write' },
    offset: { type: 'number', description: 'Log offset' },
    limit: { type: 'number', description: 'Log length' },
    timeout: {
      type: 'number',
      minimum: 0,
      description: 'For poll: wait up to this many milliseconds before returning; max 30000 ms, higher values are clamped to 30000',
    },
  },
  required: ['action'],
};

/** B's description, word for word; the cron sentence only when the host has a cron tool (as exec's). */
function describeProcessTool({ hasCronTool } = {}) {
  return [
    'Manage running exec sessions for commands already started: list, poll, log, write, send-keys, submit, paste, kill.',
    'Use poll/log when you need status, logs, quiet-success confirmation, or completion confirmation when automatic completion wake is unavailable. Use write/send-keys/submit/paste/kill for input or intervention.',
    hasCronTool ? 'Do not use process polling to emulate timers or reminders; use cron for scheduled follow-ups.' : null,
  ]
    .filter(Boolean)
    .join(' ');
}

/** `[screen 24x80, cursor at row 3, col 1; a full-screen program]` */
function screenNote(view) {
  const full = view.alternateScreen ? '; a full-screen program' : '';
  return `[screen ${view.rows.length}x${view.cols}, cursor at row ${view.cursorRow + 1}, col ${view.cursorCol + 1}${full}]`;
}

function createProcessTool(defaults = {}) {
  const scopeKey = defaults.scopeKey;
  // `openclaw-2026-04` (and `clawdis`) keep B's texts and poll; the default is later OpenClaw's.
  const april = shared.isAprilProfile(defaults);
  const idleThreshold = shared.inputWaitIdleMs(defaults.inputWaitIdleMs);

  /** Input-wait detection for a running session (later OpenClaw's fields). */
  function activity(s) {
    const lastOutputAt = s.lastOutputAt ?? s.startedAt;
    const idleMs = Math.max(0, Date.now() - lastOutputAt);
    const stdinWritable = s.stdinWritable === true;
    return { stdinWritable, waitingForInput: stdinWritable && idleMs >= idleThreshold, idleMs, lastOutputAt };
  }

  function inputWaitHint(a) {
    return `No new output for ${shared.formatDurationCompact(a.idleMs)}; this session may be waiting for input. Use process write, send-keys, submit, or paste to provide input.`;
  }

  /** A finished session's details (later OpenClaw's shape). */
  function finishedDetails(s, id, name) {
    const exitReason = shared.exitReasonOf(s);
    return {
      status: s.status === 'completed' ? 'completed' : 'failed',
      sessionId: id,
      exitCode: s.exitCode ?? undefined,
      ...(s.exitSignal ? { exitSignal: s.exitSignal } : {}),
      exitReason,
      timedOut: exitReason === 'overall-timeout',
      noOutputTimedOut: false,
      name,
    };
  }
  if (defaults.cleanupMs !== undefined) native.setSessionTtl(shared.jobTtlMs(defaults.cleanupMs));
  const scope = scopeKey ? { scopeKey } : undefined;

  /** The session as this scope sees it, or undefined. */
  function find(id) {
    return native.getSession(id, scope) ?? undefined;
  }

  /** A running, backgrounded session to act on; with `input`, one whose input can be written. */
  function requireActive(id, { input = false } = {}) {
    const s = find(id);
    if (!s || s.status !== 'running') return { error: shared.failure(`No active session found for ${id}`) };
    if (!s.backgrounded) return { error: shared.failure(`Session ${id} is not backgrounded.`) };
    if (!april && s.finalizing) return { error: shared.failure(`Session ${id} is finalizing.`) };
    if (!april && input && !s.stdinWritable) return { error: shared.failure(`Session ${id} stdin is not writable.`) };
    return { session: s, name: shared.deriveSessionName(s.command) };
  }

  async function write(id, data, name, text) {
    try {
      await native.writeStdin(id, data, scope);
    } catch (e) {
      if (e.code === 'ERR_STDIN_CLOSED' || e.code === 'ERR_SESSION_NOT_RUNNING') {
        return shared.failure(`Session ${id} stdin is not writable.`);
      }
      throw e;
    }
    return shared.textResult(text, { status: 'running', sessionId: id, name });
  }

  function list() {
    const sessions = sessionList().listSessions(scope).map((s) => {
      const running = s.status === 'running';
      const ending = running || april ? {} : (({ exitReason, timedOut, noOutputTimedOut }) => ({ exitReason, timedOut, noOutputTimedOut }))(finishedDetails(s, s.sessionId));
      return {
        sessionId: s.sessionId,
        status: s.status,
        pid: s.pid,
        startedAt: s.startedAt,
        ...(s.endedAt !== undefined ? { endedAt: s.endedAt } : {}),
        runtimeMs: s.runtimeMs,
        cwd: s.cwd,
        command: s.command,
        name: shared.deriveSessionName(s.command),
        tail: s.tail,
        truncated: s.truncated,
        ...(running ? {} : { exitCode: s.exitCode, exitSignal: s.exitSignal, ...ending }),
        ...(running && !april ? activity(s) : {}),
      };
    });
    const lines = sessions
      .slice()
      .sort((a, b) => b.startedAt - a.startedAt)
      .map((s) => {
        const label = s.name ? shared.truncateMiddle(s.name, 80) : shared.truncateMiddle(s.command, 120);
        const timeoutMarker = !april && s.exitReason === 'overall-timeout' ? ' [overall-timeout]' : '';
        const waitMarker = s.waitingForInput ? ' [input-wait]' : '';
        return `${s.sessionId} ${s.status.padEnd(9)} ${shared.formatDurationCompact(s.runtimeMs)}${timeoutMarker}${waitMarker} :: ${label}`;
      });
    return shared.textResult(lines.join('\n') || 'No running or recent sessions.', { status: 'completed', sessions });
  }

  /** Wait for output or the exit without taking anything, unless `signal` aborts first (then throw). */
  async function waitOrAbort(id, wait, signal) {
    if (signal?.aborted) throw abortError();
    if (wait <= 0) return;
    const waited = native.pollSession(id, { ...scope, timeoutMs: wait, untilOutput: true, take: false });
    if (!signal) return waited;
    let onAbort;
    const aborted = new Promise((_, reject) => {
      onAbort = () => reject(abortError());
      signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      await Promise.race([waited, aborted]);
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  async function poll(id, timeout, signal) {
    const s = find(id);
    if (!s) return shared.failure(`No session found for ${id}`);
    if (s.status === 'running' && !s.backgrounded) return shared.failure(`Session ${id} is not backgrounded.`);
    let p;
    if (april) {
      const wait = shared.clamp(Number(timeout ?? 0), 0, 0, APRIL_MAX_POLL_WAIT_MS);
      p = await native.pollSession(id, { ...scope, timeoutMs: Math.floor(wait) });
    } else {
      // Later OpenClaw: at most 30 s, back at once with output no poll has read, and an abort leaves
      // that output for the next poll.
      await waitOrAbort(id, pollWaitMs(timeout, MAX_POLL_WAIT_MS), signal);
      p = await native.pollSession(id, { ...scope, timeoutMs: 0 });
    }
    const name = shared.deriveSessionName(p.command);
    const output = [p.stdout.trimEnd(), p.stderr.trimEnd()].filter(Boolean).join('\n').trim();
    const ended = `\n\nProcess exited with ${shared.endingLabel(p.exitSignal, p.exitCode, april)}.`;
    const retention = !april && p.truncated && !p.outputFile ? RETENTION_NOTE : '';
    const guidance = !april && p.exited && p.timedOut ? `\n\n${shared.TIMEOUT_GUIDANCE}` : '';
    const finished = () =>
      april
        ? { status: p.status === 'completed' ? 'completed' : 'failed', sessionId: id, exitCode: p.exitCode ?? (p.exitSignal ? undefined : 0) }
        : finishedDetails(p, id, name);
    if (p.exited && !output && s.status !== 'running') {
      // Everything was drained by earlier polls: say so instead of repeating the tail the agent has
      // read (OpenClaw's finished branch repeats it); a run with no output at all says that.
      const body = p.output.trim() ? '(no new output)' : `(no output recorded${p.truncated ? ' — truncated to cap' : ''})`;
      return shared.textResult(`${retention}${body}${ended}${guidance}`, { ...finished(), aggregated: p.output, name });
    }
    let shown = output;
    // A full-screen program's output is drawing commands, not text: show its screen instead.
    const view = p.alternateScreen && !p.exited ? native.readScreen(id, scope) : null;
    if (view) {
      shown = `${view.text || '(blank screen)'}\n\n${screenNote(view)}`;
    } else if (p.droppedChars > 0 && shown) {
      // The pending buffer kept only the newest text: start at a line, and say what is missing and
      // where to read it.
      const nl = shown.indexOf('\n');
      const cut = nl >= 0 && nl < shown.length - 1 ? nl + 1 : 0;
      const where = p.outputFile ? `the full output is in ${p.outputFile}` : 'read them with log (offset/limit)';
      shown = `[... ${p.droppedChars + cut} earlier chars not shown: more arrived than one poll keeps; ${where} ...]\n${shown.slice(cut)}`;
    }
    // A running session quiet for long with writable input may be waiting for it (later OpenClaw).
    const live = !p.exited && !april ? activity(find(id) ?? s) : null;
    const still = live?.waitingForInput ? `\n\n${inputWaitHint(live)}` : '\n\nProcess still running.';
    const text = retention + (shown || '(no new output)') + (p.exited ? ended + guidance : still);
    return shared.textResult(text, {
      ...(p.exited ? finished() : { status: 'running', sessionId: id }),
      aggregated: p.output,
      name,
      ...(live ?? {}),
      ...(p.retryInMs !== undefined ? { retryInMs: p.retryInMs } : {}),
    });
  }

  function log(id, offset, limit) {
    const s = find(id);
    if (!s) return shared.failure(`No session found for ${id}`);
    if (s.status === 'running' && !s.backgrounded) return shared.failure(`Session ${id} is not backgrounded.`);
    const opts = { ...scope };
    if (Number.isFinite(offset)) opts.offset = Math.floor(Math.max(0, offset));
    if (Number.isFinite(limit)) opts.limit = Math.floor(Math.max(0, limit));
    const l = native.readLog(id, opts);
    const name = shared.deriveSessionName(l.command);
    const empty = l.status === 'running' ? '(no output yet)' : '(no output recorded)';
    const live = l.status === 'running' && !april ? activity(s) : null;
    const retention = !april && l.truncated && !s.outputFile ? RETENTION_NOTE : '';
    let text = retention + (l.text || empty) + (l.note ? `\n\n${l.note}` : '');
    if (live?.waitingForInput) text += `\n\n${inputWaitHint(live)}`;
    if (!april && l.status !== 'running' && s.timedOut) text += `\n\n${shared.TIMEOUT_GUIDANCE}`;
    const details = {
      status: l.status === 'running' ? 'running' : l.status,
      sessionId: id,
      total: l.totalLines,
      totalLines: l.totalLines,
      totalChars: l.totalChars,
      truncated: l.truncated,
      name,
    };
    if (l.status !== 'running') {
      Object.assign(details, { exitCode: l.exitCode, exitSignal: l.exitSignal });
      if (!april) {
        const { exitReason, timedOut, noOutputTimedOut } = finishedDetails(s, id, name);
        Object.assign(details, { exitReason, timedOut, noOutputTimedOut });
      }
    }
    if (live) Object.assign(details, live);
    return shared.textResult(text, details);
  }

  async function execute(toolCallId, params = {}, signal) {
    const action = params.action;
    const id = params.sessionId;
    if (!april && !ACTIONS.includes(action)) {
      return shared.failure(`Invalid process action. Expected one of: ${ACTIONS.join(', ')}`);
    }
    if (action === 'list') return list();
    if (!id) return shared.failure('sessionId is required for this action.');
    switch (action) {
      case 'poll':
        return poll(id, params.timeout, signal);
      case 'log':
        return log(id, params.offset, params.limit);
      case 'write': {
        const { error, name } = requireActive(id, { input: true });
        if (error) return error;
        const data = params.data ?? '';
        try {
          await native.writeStdin(id, data, { ...scope, eof: params.eof === true });
        } catch (e) {
          if (e.code === 'ERR_STDIN_CLOSED' || e.code === 'ERR_SESSION_NOT_RUNNING') {
            return shared.failure(`Session ${id} stdin is not writable.`);
          }
          throw e;
        }
        return shared.textResult(`Wrote ${Buffer.byteLength(String(data), 'utf8')} bytes to session ${id}${params.eof ? ' (stdin closed)' : ''}.`, {
          status: 'running',
          sessionId: id,
          name,
        });
      }
      case 'send-keys': {
        const { error, name } = requireActive(id, { input: true });
        if (error) return error;
        let sent;
        try {
          sent = await native.sendKeys(id, { ...scope, keys: params.keys ?? [], hex: params.hex ?? [], literal: params.literal });
        } catch (e) {
          if (['ERR_CURSOR_KEY_MODE_UNKNOWN', 'ERR_INVALID_OPTION', 'ERR_INVALID_KEY'].includes(e.code)) return shared.failure(e.message);
          if (e.code === 'ERR_STDIN_CLOSED') return shared.failure(`Session ${id} stdin is not writable.`);
          throw e;
        }
        const warn = sent.warnings.length ? `\nWarnings:\n${sent.warnings.map((w) => `- ${w}`).join('\n')}` : '';
        return shared.textResult(`Sent ${sent.bytes} bytes to session ${id}.${warn}`, { status: 'running', sessionId: id, name });
      }
      case 'submit': {
        const { error, name } = requireActive(id, { input: true });
        if (error) return error;
        return write(id, '\r', name, `Submitted session ${id} (sent CR).`);
      }
      case 'paste': {
        const { error, name } = requireActive(id, { input: true });
        if (error) return error;
        const text = params.text ?? '';
        if (params.bracketed === false && text === '') return shared.failure('No paste text provided.');
        try {
          await native.pasteText(id, text, { ...scope, bracketed: typeof params.bracketed === 'boolean' ? params.bracketed : undefined });
        } catch (e) {
          if (e.code === 'ERR_STDIN_CLOSED') return shared.failure(`Session ${id} stdin is not writable.`);
          throw e;
        }
        return shared.textResult(`Pasted ${text.length} chars to session ${id}.`, { status: 'running', sessionId: id, name });
      }
      case 'screen': {
        const s = find(id);
        if (!s) return shared.failure(`No session found for ${id}`);
        let view;
        try {
          view = native.readScreen(id, scope);
        } catch (e) {
          if (e.code === 'ERR_NOT_A_PTY') return shared.failure(e.message);
          throw e;
        }
        return shared.textResult(`${view.text || '(blank screen)'}\n\n${screenNote(view)}`, {
          status: s.status,
          sessionId: id,
          name: shared.deriveSessionName(s.command),
          screen: view,
        });
      }
      case 'kill': {
        const { error, name } = requireActive(id);
        if (error) return error;
        const killed = await native.killSession(id, scope);
        if (april) return shared.textResult(`Killed session ${id}.`, { status: 'failed', name });
        // Later OpenClaw's text; here the whole tree is gone by the time it is said, unless the note
        // names what outlived SIGKILL.
        const left = killed.survivors.length ? ` ${killed.survivors.length} process(es) outlived SIGKILL: ${killed.survivors.join(', ')}.` : '';
        return shared.textResult(`Termination requested for session ${id}.${left}`, { status: 'completed', sessionId: id, name });
      }
      case 'clear': {
        const s = find(id);
        if (!s || s.status === 'running') return shared.failure(`No finished session found for ${id}`);
        native.clearSession(id, scope);
        return shared.textResult(`Cleared session ${id}.`, { status: 'completed' });
      }
      case 'remove': {
        const s = find(id);
        if (!s) return shared.failure(`No session found for ${id}`);
        const wasRunning = await native.removeSession(id, scope);
        if (wasRunning && !april) {
          return shared.textResult(`Removed session ${id} (termination requested).`, { status: 'completed', name: shared.deriveSessionName(s.command) });
        }
        return wasRunning
          ? shared.textResult(`Removed session ${id}.`, { status: 'failed', name: shared.deriveSessionName(s.command) })
          : shared.textResult(`Removed session ${id}.`, { status: 'completed' });
      }
      default:
        return shared.failure(`Unknown action ${action}`);
    }
  }

  return {
    name: 'process',
    label: 'process',
    get description() {
      return describeProcessTool({ hasCronTool: defaults.hasCronTool });
    },
    parameters,
    execute,
  };
}

// pollWaitMs: exported for the tests of its clamp only.
module.exports = { createProcessTool, pollWaitMs };
