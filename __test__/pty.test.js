'use strict';
// PTY sessions with real programs: terminals, prompts, keys, cursor queries, resize, drain, kills.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const { native, alive, waitFor, track, killTracked, readPids, tempDir } = require('./helpers.js');

test.after(killTracked);

async function start(options) {
  const r = await native.exec({ pty: true, background: true, ...options });
  track(r.pid);
  return r;
}

/** Poll until the accumulated output matches `re`; returns everything seen. */
async function until(id, re, seen = { text: '' }) {
  await waitFor(
    async () => {
      const p = await native.pollSession(id, { timeoutMs: 500 });
      seen.text += p.stdout;
      return re.test(seen.text) || (p.exited && re.test(seen.text));
    },
    { what: `output matching ${re} (seen ${JSON.stringify(seen.text.slice(-200))})`, timeoutMs: 15000 },
  );
  return seen.text;
}

test('tty reports a terminal; TERM and size defaults', async () => {
  const r = await native.exec({ command: 'tty; echo "$TERM"; stty size', pty: true });
  track(r.pid);
  assert.equal(r.status, 'completed');
  const [tty, term, size] = r.output.trim().split('\n');
  assert.match(tty, /^\/dev\/pts\/\d+$/);
  assert.equal(term, process.env.TERM || 'xterm-256color');
  assert.equal(size, '30 120');
});

test('python3 -i driven through sendKeys and submit', async () => {
  const r = await start({ command: 'python3 -i -q' });
  const seen = { text: '' };
  await until(r.sessionId, />>> $/, seen);
  const sent = await native.sendKeys(r.sessionId, { literal: 'print(6*7)', keys: ['enter'] });
  assert.equal(sent.bytes, 'print(6*7)'.length + 1);
  assert.deepEqual(sent.warnings, []);
  await until(r.sessionId, /\n42\n/, seen);
  await native.sendKeys(r.sessionId, { keys: ['C-d'] });
  await waitFor(async () => (await native.pollSession(r.sessionId)).exited, { what: 'python to exit' });
});

test('an interactive read -p prompt is answered', async () => {
  const r = await start({ command: 'read -p "Name? " name; echo "hello $name"', shell: 'bash' });
  await until(r.sessionId, /Name\? $/);
  await native.writeStdin(r.sessionId, 'bob\r');
  const out = await until(r.sessionId, /hello bob/);
  assert.match(out, /hello bob\n/);
});

test('a TUI that queries the cursor position gets an answer, and the query is stripped', async () => {
  const script = [
    'import os, sys, termios, tty',
    'fd = sys.stdin.fileno()',
    'old = termios.tcgetattr(fd)',
    'tty.setraw(fd)',
    "os.write(1, b'\\x1b[6n')",
    "buf = b''",
    "while not buf.endswith(b'R'): buf += os.read(fd, 1)",
    'termios.tcsetattr(fd, termios.TCSADRAIN, old)',
    "print('reply', repr(buf))",
  ].join('\n');
  const dir = tempDir();
  fs.writeFileSync(path.join(dir, 'dsr.py'), script);
  const r = await native.exec({ command: 'python3 dsr.py', cwd: dir, pty: true, timeoutMs: 10000 });
  track(r.pid);
  assert.equal(r.timedOut, false);
  assert.match(r.output, /reply b'\\x1b\[1;1R'/);
  assert.ok(!r.output.includes('\x1b'), 'no raw escape left in the text');
});

test('arrow keys follow the application cursor key mode; unknown mode refuses bare arrows', async () => {
  const idle = await start({ command: 'sleep 30' });
  await assert.rejects(native.sendKeys(idle.sessionId, { keys: ['up'] }), {
    code: 'ERR_CURSOR_KEY_MODE_UNKNOWN',
    message: `Session ${idle.sessionId} cursor key mode is not known yet. Poll or log until startup output appears, then retry send-keys.`,
  });
  const modified = await native.sendKeys(idle.sessionId, { keys: ['C-up'] });
  assert.equal(modified.bytes, 6);
  await native.removeSession(idle.sessionId);

  // A prompt that never announces a mode (bash's, Python's) is in normal mode once it has drawn: arrows
  // go through as CSI sequences.
  const plainScript = [
    'import os, sys, tty',
    'tty.setraw(sys.stdin.fileno())',
    "os.write(1, b'prompt> ')",
    'data = os.read(0, 16)',
    "os.write(1, ('got ' + data.hex() + '\\r\\n').encode())",
  ].join('\n');
  const plainDir = tempDir();
  fs.writeFileSync(path.join(plainDir, 'plain.py'), plainScript);
  const p = await start({ command: 'python3 plain.py', cwd: plainDir });
  await until(p.sessionId, /prompt>/);
  assert.equal(native.listSessions().find((s) => s.sessionId === p.sessionId).cursorKeyMode, 'normal');
  await native.sendKeys(p.sessionId, { keys: ['up'] });
  await until(p.sessionId, /got 1b5b41/);

  const script = [
    'import os, sys, tty',
    'tty.setraw(sys.stdin.fileno())',
    "os.write(1, b'\\x1b[?1hready\\r\\n')",
    'data = os.read(0, 16)',
    "os.write(1, ('got ' + data.hex() + '\\r\\n').encode())",
  ].join('\n');
  const dir = tempDir();
  fs.writeFileSync(path.join(dir, 'keys.py'), script);
  const r = await start({ command: 'python3 keys.py', cwd: dir });
  await until(r.sessionId, /ready/);
  assert.equal(native.listSessions().find((s) => s.sessionId === r.sessionId).cursorKeyMode, 'application');
  await native.sendKeys(r.sessionId, { keys: ['up'] });
  await until(r.sessionId, /got 1b4f41/);
});

test('resize reaches stty size', async () => {
  const r = await start({ command: 'read x; stty size' });
  await waitFor(() => native.listSessions().some((s) => s.sessionId === r.sessionId), { what: 'session' });
  await native.resizePty(r.sessionId, 100, 40);
  await native.writeStdin(r.sessionId, '\r');
  await until(r.sessionId, /40 100/);
  await assert.rejects(native.resizePty(r.sessionId, 0, 10), { code: 'ERR_INVALID_OPTION' });
  const pipe = await native.exec({ command: 'sleep 30', background: true });
  track(pipe.pid);
  await assert.rejects(native.resizePty(pipe.sessionId, 80, 24), { code: 'ERR_NOT_A_PTY' });
  await native.removeSession(pipe.sessionId);
});

test('1 MiB written just before exit arrives whole, 50 times in a row', async () => {
  for (let i = 0; i < 50; i++) {
    const r = await native.exec({
      command: "python3 -c \"import sys; sys.stdout.write('a' * 1048576); sys.stdout.flush()\"",
      pty: true,
      maxOutputChars: 2_000_000,
    });
    track(r.pid);
    assert.equal(r.status, 'completed');
    assert.equal(r.totalChars, 1048576, `run ${i}: ${r.totalChars} chars`);
    assert.equal(r.output.length, 1048576);
  }
});

test('kill and timeout end a PTY tree', async () => {
  const dir = tempDir();
  const pids = path.join(dir, 'pids');
  const r = await start({ command: `sleep 300 & echo $! > ${pids}; wait` });
  await waitFor(() => readPids(pids).length === 1, { what: 'child' });
  track(readPids(pids));
  await native.killSession(r.sessionId);
  assert.equal(alive(readPids(pids)[0]), false);
  assert.equal(alive(r.pid), false);

  const pids2 = path.join(dir, 'pids2');
  const t = await native.exec({ command: `sleep 300 & echo $! > ${pids2}; wait`, pty: true, timeoutMs: 2000, killGraceMs: 300 });
  track(t.pid, readPids(pids2));
  assert.equal(t.timedOut, true);
  // The child was started and its pid written: the check below has something to check.
  assert.equal(readPids(pids2).length, 1, 'the timed-out run never wrote its child\'s pid');
  assert.equal(alive(readPids(pids2)[0]), false);
});

test('a grandchild holding the terminal does not hang the call', async () => {
  const started = Date.now();
  // Ignoring SIGHUP keeps it alive (and the terminal open) after the session leader exits.
  const r = await native.exec({ command: `sh -c 'trap "" HUP; exec sleep 100' & sleep 0.3; echo started`, pty: true, drainTimeoutMs: 500 });
  track(r.pid, r.leftRunning);
  assert.ok(Date.now() - started < 5000);
  assert.match(r.output, /started/);
  assert.equal(r.leftRunning.length, 1);
  process.kill(r.leftRunning[0], 'SIGKILL');
});

test('the pipe fallback (forced) works and warns with OpenClaw\'s text', async () => {
  const r = await native.exec({ command: 'tty; echo fine', pty: true, ptyForceFallback: true });
  track(r.pid);
  assert.equal(r.output, 'not a tty\nfine\n');
  assert.deepEqual(r.warnings, [
    'Warning: PTY spawn failed (PTY disabled by the ptyForceFallback option); retrying without PTY for `tty; echo fine`.',
  ]);
  const bg = await native.exec({ command: 'cat', pty: true, ptyForceFallback: true, background: true });
  track(bg.pid);
  await native.writeStdin(bg.sessionId, 'still writable\n', { eof: true });
  await until(bg.sessionId, /still writable/);
});

test('sendKeys and pasteText validate their input', async () => {
  const r = await start({ command: 'cat' });
  try {
    await assert.rejects(native.sendKeys(r.sessionId, {}), { code: 'ERR_INVALID_OPTION', message: 'No key data provided.' });
    await assert.rejects(native.sendKeys(r.sessionId, { keys: 'enter' }), { code: 'ERR_INVALID_OPTION' });
    await assert.rejects(native.sendKeys(r.sessionId, { keys: [1] }), { code: 'ERR_INVALID_OPTION' });
    // Unknown names and bad hex are refused before anything is written (nothing reaches cat).
    await assert.rejects(native.sendKeys(r.sessionId, { keys: ['C-nope'], literal: 'typed' }), (e) => {
      assert.equal(e.code, 'ERR_INVALID_KEY');
      assert.match(e.message, /^Unknown key "C-nope"\. Accepted: enter, tab, /);
      return true;
    });
    for (const keys of [['f99'], ['M-'], ['Ctrl+']]) {
      await assert.rejects(native.sendKeys(r.sessionId, { keys }), { code: 'ERR_INVALID_KEY' }, JSON.stringify(keys));
    }
    for (const hex of [['zz'], ['0x1ff']]) {
      await assert.rejects(native.sendKeys(r.sessionId, { hex }), { code: 'ERR_INVALID_KEY', message: new RegExp(`^Invalid hex byte "${hex[0]}"`) });
    }
    const aliased = await native.sendKeys(r.sessionId, { keys: ['ctrl-g'] });
    assert.equal(aliased.bytes, 1);
    // cat never turned bracketed paste on: no markers unless asked for.
    assert.equal(await native.pasteText(r.sessionId, 'abc'), 3);
    assert.equal(await native.pasteText(r.sessionId, 'abc', { bracketed: true }), 'abc'.length + 12);
    assert.equal(await native.pasteText(r.sessionId, 'abc', { bracketed: false }), 3);
    await assert.rejects(native.pasteText(r.sessionId, '', { bracketed: false }), { code: 'ERR_INVALID_OPTION' });
    await assert.rejects(native.sendKeys('nope-nope', { keys: ['enter'] }), { code: 'ERR_UNKNOWN_SESSION' });
  } finally {
    await native.removeSession(r.sessionId);
  }
});

test('paste brackets only for a program that turned bracketed paste on', async () => {
  // Python's REPL never turns it on; brackets would make a multi-line paste one SyntaxError.
  const py = await start({ command: 'python3 -q' });
  try {
    await until(py.sessionId, />>> $/);
    await native.pasteText(py.sessionId, 'a = 1\nb = 2\n');
    await native.sendKeys(py.sessionId, { literal: 'print(a + b)', keys: ['enter'] });
    const seen = { text: '' };
    await until(py.sessionId, /\n3\r?\n/, seen);
    assert.doesNotMatch(seen.text, /SyntaxError/);
  } finally {
    await native.removeSession(py.sessionId);
  }
  // A program that asks for it gets the markers around the text.
  const dir = tempDir();
  fs.writeFileSync(
    path.join(dir, 'bp.py'),
    ['import os, sys, tty', 'tty.setraw(0)', "os.write(1, b'\\x1b[?2004hready\\r\\n')", 'data = os.read(0, 64)', "os.write(1, ('got ' + data.hex() + '\\r\\n').encode())"].join('\n'),
  );
  const bp = await start({ command: 'python3 bp.py', cwd: dir });
  await until(bp.sessionId, /ready/);
  await native.pasteText(bp.sessionId, 'hi');
  await until(bp.sessionId, /got 1b5b3230307e68691b5b3230317e/);
});

test('a full-screen program is read as its screen: readScreen, the process tool\'s screen action and its polls', async () => {
  const dir = tempDir();
  fs.writeFileSync(
    path.join(dir, 'tui.py'),
    [
      'import os, sys, time',
      // Alternate screen, clear, a title, a status line at the bottom, the cursor parked on row 2.
      "os.write(1, b'\\x1b[?1049h\\x1b[2J\\x1b[1;1HEDITOR: notes.txt\\x1b[10;1H-- INSERT --\\x1b[2;3H')",
      'sys.stdin.read(1)',
      "os.write(1, b'\\x1b[?1049l')",
    ].join('\n'),
  );
  const api = require('../js/index.js');
  const text = (res) => res.content[0].text;
  const { exec, process: proc } = api.createBashTools({});
  const r = await exec.execute('1', { command: 'python3 tui.py', workdir: dir, pty: true, background: true });
  const id = r.details.sessionId;
  track(r.details.pid);
  const view = await waitFor(() => {
    const v = native.readScreen(id);
    return v.text.includes('-- INSERT --') && v;
  }, { what: 'the screen' });
  assert.equal(view.alternateScreen, true);
  assert.equal(view.rows[0], 'EDITOR: notes.txt');
  assert.equal(view.rows[9], '-- INSERT --');
  assert.deepEqual([view.cursorRow, view.cursorCol], [1, 2]);
  assert.equal(view.text, `EDITOR: notes.txt${'\n'.repeat(9)}-- INSERT --`);
  const polled = await proc.execute('p', { action: 'poll', sessionId: id });
  assert.match(text(polled), /^EDITOR: notes\.txt\n[\s\S]*-- INSERT --\n\n\[screen 30x120, cursor at row 2, col 3; a full-screen program\]\n\nProcess still running\.$/);
  const shown = await proc.execute('s', { action: 'screen', sessionId: id });
  assert.equal(shown.details.screen.alternateScreen, true);
  await native.resizePty(id, 100, 40);
  assert.equal(native.readScreen(id).cols, 100);
  await native.sendKeys(id, { keys: ['enter'] });
  await waitFor(async () => (await native.pollSession(id, { timeoutMs: 500 })).exited, { what: 'the exit' });
  // Pipe sessions have no screen.
  const pipe = await native.exec({ command: 'sleep 5', background: true });
  track(pipe.pid);
  assert.throws(() => native.readScreen(pipe.sessionId), { code: 'ERR_NOT_A_PTY' });
  const noScreen = await proc.execute('n', { action: 'screen', sessionId: pipe.sessionId });
  assert.match(text(noScreen), /is not a PTY session, so it has no screen/);
  await native.removeSession(pipe.sessionId);
});

test('send-keys sends an ordered sequence in its order (keys may hold literal and hex steps)', async () => {
  const dir = tempDir();
  fs.writeFileSync(
    path.join(dir, 'echo.py'),
    ['import os, sys, tty', 'tty.setraw(0)', "os.write(1, b'ready\\r\\n')", 'data = b""', "while not data.endswith(b'!'):", '    data += os.read(0, 64)', "os.write(1, ('got ' + data.hex() + '\\r\\n').encode())"].join('\n'),
  );
  const r = await start({ command: 'python3 echo.py', cwd: dir });
  await until(r.sessionId, /ready/);
  // vi-like: i, then the text, then Escape, then a byte, then the end marker.
  await native.sendKeys(r.sessionId, { keys: ['i', { literal: 'text' }, 'escape', { hex: '41' }, '!'] });
  await until(r.sessionId, new RegExp(`got ${Buffer.from('itext\x1bA!').toString('hex')}`));
  await assert.rejects(native.sendKeys(r.sessionId, { keys: [{ nope: 1 }] }), { code: 'ERR_INVALID_OPTION', message: /^keys\[0\] must be a key name/ });
  await native.removeSession(r.sessionId);
});
