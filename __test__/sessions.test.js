'use strict';
// Background sessions: yield, background, list, poll, log, write, kill, clear, remove, TTL, scopes.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const { native, alive, waitFor, track, killTracked, readPids, tempDir } = require('./helpers.js');

test.after(killTracked);

async function start(options) {
  const r = await native.exec(options);
  track(r.pid);
  return r;
}

async function pollUntilExit(id, options = {}) {
  let stdout = '';
  let stderr = '';
  for (;;) {
    const p = await native.pollSession(id, { timeoutMs: 2000, ...options });
    stdout += p.stdout;
    stderr += p.stderr;
    if (p.exited) return { last: p, stdout, stderr };
  }
}

function threads() {
  return Number(/Threads:\s+(\d+)/.exec(fs.readFileSync('/proc/self/status', 'utf8'))[1]);
}

function openFds() {
  return fs.readdirSync('/proc/self/fd').length;
}

test('yieldMs hands a long run to the background; polls drain it to completion', async () => {
  const r = await start({ command: 'echo first; sleep 0.6; echo second; sleep 0.05; echo oops >&2; exit 4', yieldMs: 150 });
  assert.equal(r.status, 'running');
  assert.equal(r.exitCode, undefined);
  assert.match(r.output, /first/);
  const { last, stdout, stderr } = await pollUntilExit(r.sessionId);
  assert.equal(stdout, 'first\nsecond\n');
  assert.equal(stderr, 'oops\n');
  assert.equal(last.status, 'completed', 'a non-zero exit is completed');
  assert.equal(last.exitCode, 4);
  assert.equal(last.retryInMs, undefined);
  assert.equal(last.output, 'first\nsecond\noops\n');
});

test('a run that ends inside the yield window resolves as a foreground run and is not kept', async () => {
  const r = await start({ command: 'echo quick', yieldMs: 5000 });
  assert.equal(r.status, 'completed');
  assert.equal(r.output, 'quick\n');
  assert.ok(!native.listSessions().some((s) => s.sessionId === r.sessionId));
});

test('background: true returns at once; listSessions shows it running then finished', async () => {
  const r = await start({ command: 'sleep 0.4; echo bg-done', background: true });
  assert.equal(r.status, 'running');
  const listed = native.listSessions().find((s) => s.sessionId === r.sessionId);
  assert.ok(listed, 'listed');
  assert.equal(listed.status, 'running');
  assert.equal(listed.backgrounded, true);
  assert.equal(listed.command, 'sleep 0.4; echo bg-done');
  assert.equal(listed.pid, r.pid);
  await waitFor(() => native.listSessions().find((s) => s.sessionId === r.sessionId)?.status === 'completed', { what: 'finish' });
  const done = native.listSessions().find((s) => s.sessionId === r.sessionId);
  assert.equal(done.exitCode, 0);
  assert.equal(done.tail, 'bg-done\n');
  assert.ok(done.endedAt >= done.startedAt);
});

test('scopes: a session is visible only to its scope; no scope sees everything', async () => {
  const a = await start({ command: 'sleep 30', background: true, scopeKey: 'agent:a' });
  const b = await start({ command: 'sleep 30', background: true, scopeKey: 'agent:b' });
  try {
    const inA = native.listSessions({ scopeKey: 'agent:a' }).map((s) => s.sessionId);
    assert.ok(inA.includes(a.sessionId));
    assert.ok(!inA.includes(b.sessionId));
    const all = native.listSessions().map((s) => s.sessionId);
    assert.ok(all.includes(a.sessionId) && all.includes(b.sessionId));
    await assert.rejects(native.pollSession(b.sessionId, { scopeKey: 'agent:a' }), { code: 'ERR_UNKNOWN_SESSION' });
    await assert.rejects(native.killSession(b.sessionId, { scopeKey: 'agent:a' }), { code: 'ERR_UNKNOWN_SESSION' });
    assert.throws(() => native.readLog(b.sessionId, { scopeKey: 'agent:a' }), { code: 'ERR_UNKNOWN_SESSION' });
    const p = await native.pollSession(a.sessionId, { scopeKey: 'agent:a' });
    assert.equal(p.status, 'running');
  } finally {
    await native.removeSession(a.sessionId);
    await native.removeSession(b.sessionId);
  }
});

test('readLog: default last 200 lines with note, tail mode, offset, offset and limit', async () => {
  const r = await start({ command: 'seq 1 250', background: true });
  await pollUntilExit(r.sessionId);
  const def = native.readLog(r.sessionId);
  assert.equal(def.totalLines, 250);
  assert.equal(def.text.split('\n').length, 200);
  assert.ok(def.text.startsWith('51\n') && def.text.endsWith('\n250'));
  assert.equal(def.note, '[showing last 200 of 250 lines; pass offset/limit to page]');
  assert.equal(native.readLog(r.sessionId, { limit: 3 }).text, '248\n249\n250');
  const off = native.readLog(r.sessionId, { offset: 245 });
  assert.equal(off.text, '246\n247\n248\n249\n250');
  assert.equal(off.note, undefined);
  assert.equal(native.readLog(r.sessionId, { offset: 10, limit: 2 }).text, '11\n12');
  assert.equal(native.readLog(r.sessionId, { offset: 0 }).text.split('\n').length, 250);
  assert.throws(() => native.readLog(r.sessionId, { offset: -1 }), { code: 'ERR_INVALID_OPTION' });
  assert.throws(() => native.readLog(r.sessionId, { limit: -5 }), { code: 'ERR_INVALID_OPTION' });
  native.clearSession(r.sessionId);
});

test('writeStdin with eof to a stdin: "pipe" session running cat', async () => {
  const r = await start({ command: 'cat; echo "<eof>"', stdin: 'pipe', background: true });
  assert.equal(await native.writeStdin(r.sessionId, 'hello\n'), 6);
  assert.equal(await native.writeStdin(r.sessionId, Buffer.from('world\n'), { eof: true }), 6);
  const { stdout, last } = await pollUntilExit(r.sessionId);
  assert.equal(stdout, 'hello\nworld\n<eof>\n');
  assert.equal(last.exitCode, 0);
  await assert.rejects(native.writeStdin(r.sessionId, 'late'), { code: 'ERR_SESSION_NOT_RUNNING' });
});

test('writing to a closed stdin is a typed error that loses nothing', async () => {
  const r = await start({ command: 'sleep 30', background: true });
  try {
    await assert.rejects(native.writeStdin(r.sessionId, 'x'), {
      code: 'ERR_STDIN_CLOSED',
      message: `Session ${r.sessionId} stdin is not writable. Start the command with stdin: "pipe" (or pty) to write to it.`,
    });
    const piped = await start({ command: 'cat', stdin: 'pipe', background: true });
    await native.writeStdin(piped.sessionId, 'a', { eof: true });
    await assert.rejects(native.writeStdin(piped.sessionId, 'b'), (e) => ['ERR_STDIN_CLOSED', 'ERR_SESSION_NOT_RUNNING'].includes(e.code));
    await pollUntilExit(piped.sessionId);
    await assert.rejects(native.writeStdin(r.sessionId, 42), { code: 'ERR_INVALID_OPTION' });
  } finally {
    await native.removeSession(r.sessionId);
  }
});

test('killSession ends the whole tree, grandchildren included, and returns when it is gone', async () => {
  const dir = tempDir();
  const pids = path.join(dir, 'pids');
  const r = await start({
    command: `sleep 300 & echo $! >> ${pids}; sh -c 'sleep 301 & echo $! >> ${pids}; wait' & wait`,
    background: true,
    killGraceMs: 1000,
  });
  await waitFor(() => readPids(pids).length === 2, { what: 'grandchildren' });
  track(readPids(pids));
  const k = await native.killSession(r.sessionId);
  assert.equal(k.sessionId, r.sessionId);
  assert.deepEqual(k.survivors, []);
  for (const pid of [r.pid, ...readPids(pids)]) assert.equal(alive(pid), false, `pid ${pid} survived`);
  const s = native.listSessions().find((x) => x.sessionId === r.sessionId);
  assert.equal(s.status, 'failed');
  await assert.rejects(native.killSession(r.sessionId), { code: 'ERR_SESSION_NOT_RUNNING' });
});

test('clearSession forgets a finished session; removeSession kills and forgets a running one', async () => {
  const done = await start({ command: 'echo x', background: true });
  await pollUntilExit(done.sessionId);
  const running = await start({ command: 'sleep 300', background: true });
  assert.throws(() => native.clearSession(running.sessionId), { code: 'ERR_SESSION_RUNNING' });
  native.clearSession(done.sessionId);
  assert.throws(() => native.readLog(done.sessionId), { code: 'ERR_UNKNOWN_SESSION' });
  assert.equal(await native.removeSession(running.sessionId), true);
  assert.equal(alive(running.pid), false);
  await assert.rejects(native.pollSession(running.sessionId), { code: 'ERR_UNKNOWN_SESSION' });
});

test('finished sessions expire after the TTL', async () => {
  const before = native.getSessionTtl();
  try {
    native.setSessionTtl(300);
    const r = await start({ command: 'echo bye', background: true });
    await pollUntilExit(r.sessionId);
    assert.ok(native.listSessions().some((s) => s.sessionId === r.sessionId), 'kept right after exit');
    await waitFor(() => !native.listSessions().some((s) => s.sessionId === r.sessionId), { what: 'the TTL sweep' });
    await assert.rejects(native.pollSession(r.sessionId), { code: 'ERR_UNKNOWN_SESSION' });
    assert.throws(() => native.setSessionTtl(-1), { code: 'ERR_INVALID_OPTION' });
  } finally {
    native.setSessionTtl(before);
  }
});

test('pending output is capped per stream, keeping the newest; aggregate keeps head and tail', async () => {
  const r = await start({
    command: 'seq 1 5000; seq 1 5000 >&2',
    background: true,
    pendingMaxOutputChars: 100,
  });
  await waitFor(() => native.listSessions().find((s) => s.sessionId === r.sessionId)?.status !== 'running', { what: 'exit' });
  const p = await native.pollSession(r.sessionId);
  assert.equal(p.exited, true);
  assert.equal(p.pendingTruncated, true);
  assert.ok(p.stdout.length <= 100 && p.stdout.endsWith('4999\n5000\n'), p.stdout);
  assert.ok(p.stderr.length <= 100 && p.stderr.endsWith('4999\n5000\n'), p.stderr);
  assert.match(p.output, /^1\n2\n3\n/);
});

test('the first poll after exit returns all undrained output, not only the tail', async () => {
  const r = await start({ command: 'for i in $(seq 1 3000); do echo "line $i"; done', background: true });
  await waitFor(() => native.listSessions().find((s) => s.sessionId === r.sessionId)?.status === 'completed', { what: 'exit' });
  const p = await native.pollSession(r.sessionId);
  const expected = Array.from({ length: 3000 }, (_, i) => `line ${i + 1}\n`).join('');
  assert.equal(expected.length > 2000, true);
  assert.ok(expected.length <= 30000);
  assert.equal(p.stdout, expected);
  assert.equal(p.pendingTruncated, false);
  const again = await native.pollSession(r.sessionId);
  assert.equal(again.stdout, '');
});

test('a poll with a timeout waits for the exit, not the first output (B), and reports retryInMs back-off', async () => {
  // Output arrives long before the exit: a poll that returned at the first chunk would see only "early".
  const short = await start({ command: 'echo early; sleep 0.4; echo done', background: true });
  const p = await native.pollSession(short.sessionId, { timeoutMs: 20000 });
  assert.equal(p.exited, true);
  assert.equal(p.stdout, 'early\ndone\n');
  const r = await start({ command: 'echo first; sleep 30', background: true });
  try {
    // The deadline passes first: the poll returns what arrived, the run still going.
    const q = await native.pollSession(r.sessionId, { timeoutMs: 300 });
    assert.equal(q.exited, false);
    assert.equal(q.stdout, 'first\n');
    assert.equal(q.retryInMs, 5000);
    const empty1 = await native.pollSession(r.sessionId);
    const empty2 = await native.pollSession(r.sessionId);
    assert.equal(empty1.stdout, '');
    assert.deepEqual([empty1.retryInMs, empty2.retryInMs], [5000, 10000]);
    await assert.rejects(native.pollSession(r.sessionId, { timeoutMs: 120001 }), { code: 'ERR_INVALID_OPTION' });
    await assert.rejects(native.pollSession(r.sessionId, { timeoutMs: -1 }), { code: 'ERR_INVALID_OPTION' });
  } finally {
    await native.removeSession(r.sessionId);
  }
});

test('onExit fires once for a background session; onOutput keeps streaming after exec resolved', async () => {
  const exits = [];
  const chunks = [];
  const r = await start({
    command: 'echo a; sleep 0.2; echo b',
    background: true,
    onExit: (i) => exits.push(i),
    onOutput: (c) => chunks.push(c.text),
  });
  await waitFor(() => exits.length === 1, { what: 'onExit' });
  // No timer decides "once": removing the session drops its callbacks, so a second onExit could only be
  // a call already queued, and queued calls are delivered in the same event-loop turn as the removal's
  // own answer, before the setImmediate after it.
  assert.equal(await native.removeSession(r.sessionId), false, 'it had ended: nothing to kill');
  await new Promise((res) => setImmediate(res));
  assert.equal(exits.length, 1);
  assert.equal(exits[0].sessionId, r.sessionId);
  assert.equal(chunks.join(''), 'a\nb\n');
});

test('an abort after backgrounding does not kill the session; its timeout still applies', async () => {
  const ac = new AbortController();
  const r = await start({ command: 'sleep 30', yieldMs: 50, signal: ac.signal, timeoutMs: 800, killGraceMs: 200 });
  assert.equal(r.status, 'running');
  ac.abort();
  // Whether the abort killed it shows in how it ended, not in a wait: killed by its 800 ms timeout,
  // never aborted.
  const { last } = await pollUntilExit(r.sessionId);
  assert.equal(last.status, 'failed');
  assert.match(last.reason, /timed out/);
  assert.doesNotMatch(last.reason, /abort/i);
});

test('unknown ids and bad arguments are typed errors', async () => {
  await assert.rejects(native.pollSession('no-such-session'), { code: 'ERR_UNKNOWN_SESSION', message: /No session found for no-such-session/ });
  await assert.rejects(native.pollSession(42), { code: 'ERR_UNKNOWN_SESSION' });
  await assert.rejects(native.killSession('no-such-session'), { code: 'ERR_UNKNOWN_SESSION' });
  await assert.rejects(native.removeSession('no-such-session'), { code: 'ERR_UNKNOWN_SESSION' });
  await assert.rejects(native.writeStdin('no-such-session', 'x'), { code: 'ERR_UNKNOWN_SESSION' });
  assert.throws(() => native.readLog('no-such-session'), { code: 'ERR_UNKNOWN_SESSION' });
  assert.throws(() => native.clearSession('no-such-session'), { code: 'ERR_UNKNOWN_SESSION' });
  assert.throws(() => native.listSessions('scope'), { code: 'ERR_INVALID_OPTION' });
  await assert.rejects(native.exec({ command: 'true', yieldMs: -1 }), { code: 'ERR_INVALID_OPTION' });
  await assert.rejects(native.exec({ command: 'true', background: 'yes' }), { code: 'ERR_INVALID_OPTION' });
});

test('1000 background sessions: listed, threads flat, fds back to baseline after kill', async () => {
  // The runtime's own descriptors (its reactor, the exit ring, the log directory) exist first.
  await native.exec({ command: 'true' });
  const fdBaseline = openFds();
  const threadBaseline = threads();
  const ids = [];
  for (let i = 0; i < 1000; i++) {
    const r = await native.exec({ command: 'sleep 300', background: true, scopeKey: 'thousand', killGraceMs: 2000 });
    track(r.pid);
    ids.push(r.sessionId);
  }
  const listed = native.listSessions({ scopeKey: 'thousand' });
  assert.equal(listed.length, 1000);
  assert.equal(new Set(listed.map((s) => s.sessionId)).size, 1000);
  const threadsWithSessions = threads();
  assert.ok(threadsWithSessions <= threadBaseline + 4, `threads grew from ${threadBaseline} to ${threadsWithSessions}`);
  // Two pipes each, and nothing for the exit where one ring waits for every run; a pidfd more
  // where the kernel has no io_uring waitid (the README's figure for each).
  const perSession = native.processTracking().exitWatch === 'io_uring' ? 2 : 3;
  const held = openFds() - fdBaseline;
  assert.ok(held <= 1000 * perSession + 10, `1000 sessions hold ${held} descriptors (${perSession} each expected)`);
  await Promise.all(ids.map((id) => native.removeSession(id)));
  assert.equal(native.listSessions({ scopeKey: 'thousand' }).length, 0);
  await waitFor(() => openFds() <= fdBaseline, { what: `fds back to ${fdBaseline} (now ${openFds()})`, timeoutMs: 20000 });
  assert.ok(threads() <= threadBaseline + 4);
});

test('a session\'s output log is deleted when it is removed, unless the caller keeps it', async () => {
  const dir = tempDir();
  const big = 'seq 1 20000';
  const gone = await native.exec({ command: big, maxOutputChars: 100, logDir: dir, background: true });
  const kept = await native.exec({ command: big, maxOutputChars: 100, logDir: dir, background: true, keepLogs: true });
  const logOf = async (id) => {
    const p = await native.pollSession(id, { timeoutMs: 20000 });
    assert.equal(p.exited, true);
    return p.outputFile;
  };
  const goneFile = await logOf(gone.sessionId);
  const keptFile = await logOf(kept.sessionId);
  assert.ok(goneFile && fs.existsSync(goneFile), 'the cut output has a log while the session exists');
  assert.ok(keptFile && fs.existsSync(keptFile));
  await native.removeSession(gone.sessionId);
  await native.removeSession(kept.sessionId);
  assert.equal(fs.existsSync(goneFile), false, 'removed with its session');
  assert.equal(fs.existsSync(keptFile), true, 'keepLogs keeps it');
  fs.rmSync(keptFile);
});

test('listSessions follows changes: after output, exit, kill and removal it equals a list built afresh', async () => {
  const raw = require('../index.js');
  const { createSessionList } = require('../js/session-list.js');
  const scope = { scopeKey: 'follow' };
  // What a list built from nothing shows now, without the clock-driven runtime and idle time.
  const plain = (list) => list.map((s) => ({ ...s, runtimeMs: undefined, idleMs: undefined }));
  const fresh = () => plain(createSessionList(raw).listSessions(scope));
  const same = () => assert.deepEqual(plain(native.listSessions(scope)), fresh());
  const find = (id) => native.listSessions(scope).find((s) => s.sessionId === id);

  const a = await start({ command: 'sleep 30', background: true, ...scope });
  const b = await start({ command: 'read x; echo "got $x"; sleep 30', background: true, stdin: 'pipe', ...scope });
  const c = await start({ command: 'sleep 0.3; exit 3', background: true, ...scope });
  assert.deepEqual(native.listSessions(scope).map((s) => s.sessionId).sort(), [a, b, c].map((r) => r.sessionId).sort());
  same();

  // Output reaches the kept copy.
  await native.writeStdin(b.sessionId, 'hi\n');
  await waitFor(() => find(b.sessionId).tail.includes('got hi'), { what: 'the output in the listed tail' });
  same();
  // An exit of its own, and a kill.
  await waitFor(() => find(c.sessionId).status !== 'running', { what: 'c to end' });
  assert.equal(find(c.sessionId).exitCode, 3);
  same();
  await native.killSession(a.sessionId);
  await waitFor(() => find(a.sessionId).killed, { what: 'a killed in the list' });
  same();
  // A removal, and a session that appears after it.
  await native.removeSession(c.sessionId);
  const d = await start({ command: 'sleep 30', background: true, ...scope });
  const ids = native.listSessions(scope).map((s) => s.sessionId);
  assert.ok(!ids.includes(c.sessionId) && ids.includes(d.sessionId), ids.join(' '));
  assert.deepEqual(ids.slice(0, 2).sort(), [b.sessionId, d.sessionId].sort(), 'running ones first');
  same();

  // Shared objects are frozen; a running session's runtime still grows, and is serialized.
  const listed = find(b.sessionId);
  assert.ok(Object.isFrozen(listed));
  assert.throws(() => {
    listed.tail = 'edited';
  }, TypeError);
  const before = listed.runtimeMs;
  await waitFor(() => listed.runtimeMs > before + 20, { what: 'runtimeMs to grow' });
  assert.ok(JSON.parse(JSON.stringify(listed)).runtimeMs > before);
  // So does the quiet since the last output, while nothing changes.
  const quiet = listed.idleMs;
  await waitFor(() => listed.idleMs > quiet + 20, { what: 'idleMs to grow' });
  // Editing the returned array does not edit the list.
  native.listSessions(scope).length = 0;
  assert.equal(native.listSessions(scope).length, 3);

  for (const r of [a, b, d]) await native.removeSession(r.sessionId);
  assert.deepEqual(native.listSessions(scope), []);
});

test('sessionChanges refuses a tick that no call returned, with a typed error', () => {
  const raw = require('../index.js');
  for (const since of ['1', -1, 1.5, NaN, Infinity, null]) {
    assert.throws(() => raw.sessionChanges(since), { code: 'ERR_INVALID_OPTION', message: /since must be the tick/ }, String(since));
  }
  assert.throws(() => raw.sessionChanges(0, { scopeKey: 7 }), { code: 'ERR_INVALID_OPTION' });
  const first = raw.sessionChanges(0);
  assert.equal(first.full, true);
  assert.equal(raw.sessionChanges(first.tick).full, false);
});

test('getSession looks one session up in its scope; the exit notice is claimed once per session', async () => {
  const raw = require('../index.js');
  const r = await start({ command: 'sleep 0.2; echo done', background: true, scopeKey: 'lookup' });
  const running = native.getSession(r.sessionId, { scopeKey: 'lookup' });
  assert.equal(running.sessionId, r.sessionId);
  assert.equal(running.status, 'running');
  assert.equal(running.backgrounded, true);
  assert.equal(native.getSession(r.sessionId, { scopeKey: 'another' }), null, 'other scopes do not see it');
  assert.equal(native.getSession('no-such-session'), null);
  assert.throws(() => native.getSession(r.sessionId, { scopeKey: 5 }), { code: 'ERR_INVALID_OPTION' });
  assert.equal(raw.claimExitNotice(r.sessionId), false, 'not while it runs');
  await waitFor(() => native.getSession(r.sessionId)?.status === 'completed', { what: 'exit' });
  assert.match(native.getSession(r.sessionId).tail, /done/);
  assert.equal(raw.claimExitNotice(r.sessionId), true);
  assert.equal(raw.claimExitNotice(r.sessionId), false, 'only once');
  assert.equal(raw.claimExitNotice('no-such-session'), false);
  await native.removeSession(r.sessionId);
  assert.equal(native.getSession(r.sessionId), null);
});

test('without io_uring (AGENT_EXEC_NO_IO_URING) exits are awaited by pidfds: foreground, background and kill behave the same', async () => {
  const { execFile } = require('node:child_process');
  const script = `
    const native = require(${JSON.stringify(path.join(__dirname, '..', 'js', 'index.js'))});
    (async () => {
      const fg = await native.exec({ command: 'echo hi; exit 5' });
      const bg = await native.exec({ command: 'sleep 0.3; exit 6', background: true });
      let p;
      do p = await native.pollSession(bg.sessionId, { timeoutMs: 2000 }); while (!p.exited);
      const live = await native.exec({ command: 'sleep 300', background: true });
      await native.removeSession(live.sessionId);
      const gone = (() => { try { process.kill(live.pid, 0); return false; } catch { return true; } })();
      console.log(JSON.stringify({ watch: native.processTracking().exitWatch, fg: [fg.exitCode, fg.output], bg: p.exitCode, gone }));
    })().catch((e) => { console.error(e); process.exit(1); });`;
  const out = await new Promise((resolve, reject) => {
    execFile(process.execPath, ['-e', script], { env: { ...process.env, AGENT_EXEC_NO_IO_URING: '1' }, timeout: 60000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout));
  });
  const r = JSON.parse(out.trim().split('\n').pop());
  assert.equal(r.watch, 'pidfd');
  assert.deepEqual(r.fg, [5, 'hi\n']);
  assert.equal(r.bg, 6);
  assert.equal(r.gone, true, 'the removed session was killed');
});
