'use strict';
// The `process` tool, as OpenClaw B's agents call it: every action, text and details shape.

const native = require('../native.js').loadNative();
const shared = require('./shared.js');
const { sessionList } = require('../session-list.js');

const parameters = {
  type: 'object',
  properties: {
    action: { type: 'string', description: 'Process action' },
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
    timeout: { type: 'number', minimum: 0, description: 'For poll: wait up to this many milliseconds before returning' },
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
  if (defaults.cleanupMs !== undefined) native.setSessionTtl(shared.jobTtlMs(defaults.cleanupMs));
  const scope = scopeKey ? { scopeKey } : undefined;

  /** The session as this scope sees it, or undefined. */
  function find(id) {
    return native.getSession(id, scope) ?? undefined;
  }

  function requireActive(id) {
    const s = find(id);
    if (!s || s.status !== 'running') return { error: shared.failure(`No active session found for ${id}`) };
    if (!s.backgrounded) return { error: shared.failure(`Session ${id} is not backgrounded.`) };
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
    const sessions = sessionList().listSessions(scope).map((s) => ({
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
      ...(s.status !== 'running' ? { exitCode: s.exitCode, exitSignal: s.exitSignal } : {}),
    }));
    const lines = sessions
      .slice()
      .sort((a, b) => b.startedAt - a.startedAt)
      .map((s) => {
        const label = s.name ? shared.truncateMiddle(s.name, 80) : shared.truncateMiddle(s.command, 120);
        return `${s.sessionId} ${s.status.padEnd(9)} ${shared.formatDurationCompact(s.runtimeMs)} :: ${label}`;
      });
    return shared.textResult(lines.join('\n') || 'No running or recent sessions.', { status: 'completed', sessions });
  }

  async function poll(id, timeout) {
    const s = find(id);
    if (!s) return shared.failure(`No session found for ${id}`);
    if (s.status === 'running' && !s.backgrounded) return shared.failure(`Session ${id} is not backgrounded.`);
    const wait = shared.clamp(Number(timeout ?? 0), 0, 0, 120000);
    const p = await native.pollSession(id, { ...scope, timeoutMs: Math.floor(wait) });
    const name = shared.deriveSessionName(p.command);
    const output = [p.stdout.trimEnd(), p.stderr.trimEnd()].filter(Boolean).join('\n').trim();
    const ended = `\n\nProcess exited with ${shared.exitLabel(p.exitSignal, p.exitCode)}.`;
    if (p.exited && !output && s.status !== 'running') {
      // Everything was drained by earlier polls: say so instead of repeating the tail the agent has
      // read (OpenClaw's finished branch repeats it); a run with no output at all says that.
      const body = p.output.trim() ? '(no new output)' : `(no output recorded${p.truncated ? ' — truncated to cap' : ''})`;
      return shared.textResult(`${body}${ended}`, {
        status: p.status === 'completed' ? 'completed' : 'failed',
        sessionId: id,
        exitCode: p.exitCode ?? (p.exitSignal ? undefined : 0),
        aggregated: p.output,
        name,
      });
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
    const text = (shown || '(no new output)') + (p.exited ? ended : '\n\nProcess still running.');
    return shared.textResult(text, {
      status: p.exited ? p.status : 'running',
      sessionId: id,
      ...(p.exited ? { exitCode: p.exitCode ?? (p.exitSignal ? undefined : 0) } : {}),
      aggregated: p.output,
      name,
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
    const text = (l.text || empty) + (l.note ? `\n\n${l.note}` : '');
    const details = {
      status: l.status === 'running' ? 'running' : l.status,
      sessionId: id,
      total: l.totalLines,
      totalLines: l.totalLines,
      totalChars: l.totalChars,
      truncated: l.truncated,
      name,
    };
    if (l.status !== 'running') Object.assign(details, { exitCode: l.exitCode, exitSignal: l.exitSignal });
    return shared.textResult(text, details);
  }

  async function execute(toolCallId, params = {}) {
    const action = params.action;
    const id = params.sessionId;
    if (action === 'list') return list();
    if (!id) return shared.failure('sessionId is required for this action.');
    switch (action) {
      case 'poll':
        return poll(id, params.timeout);
      case 'log':
        return log(id, params.offset, params.limit);
      case 'write': {
        const { error, name } = requireActive(id);
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
        const { error, name } = requireActive(id);
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
        const { error, name } = requireActive(id);
        if (error) return error;
        return write(id, '\r', name, `Submitted session ${id} (sent CR).`);
      }
      case 'paste': {
        const { error, name } = requireActive(id);
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
        await native.killSession(id, scope);
        return shared.textResult(`Killed session ${id}.`, { status: 'failed', name });
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

module.exports = { createProcessTool };
