'use strict';
// The OpenClaw tools with a container configuration (issue 37): the exec and process tools' behaviours
// of tools.test.js, run in a container of a real engine (Podman in CI, scripts/podman-engine.sh), PTY
// included. What the engine sees is checked, not only what the tools say: the processes left in the
// scope's container after a kill, an abort or a timeout, and the files a run made in the workspace.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const api = require('../js/index.js');
const { waitFor, tempDir, pollToExit, assertExitTexts } = require('./helpers.js');

const engine = process.env.AGENT_EXEC_TEST_ENGINE || '';
const image = process.env.AGENT_EXEC_TEST_IMAGE || 'localhost/agent-exec-test:busybox';
const required = (process.env.AGENT_EXEC_TEST_REQUIRE || '').split(',').includes('container-engine');
if (required && !engine) throw new Error('AGENT_EXEC_TEST_REQUIRE promises a container engine, but AGENT_EXEC_TEST_ENGINE is not set');
const skip = !engine && 'no container engine here (AGENT_EXEC_TEST_ENGINE names one; scripts/podman-engine.sh serves one)';
const when = { skip, timeout: 120000 };

const text = (r) => r.content[0].text;
let seq = 0;

/** The exec and process tools of a fresh scope whose host=sandbox is a container of the engine. */
function tools(extra = {}) {
  const cwd = fs.realpathSync(tempDir());
  const scopeKey = `container-tools-${process.pid}-${++seq}`;
  scopes.push(scopeKey);
  const t = api.createBashTools({ cwd, scopeKey, container: { image, engine, network: 'none' }, ...extra });
  return { ...t, cwd, scopeKey };
}

/** The command lines running in the scope's container, as the container's `ps` lists them. */
async function running(t) {
  const r = await api.exec({ command: 'ps -o args', cwd: t.cwd, scopeKey: t.scopeKey, host: { container: { image, engine, network: 'none' } } });
  return r.output;
}


const scopes = [];
test.after(async () => {
  // What a failed test left running is killed, session by session (the containers go with this process).
  for (const scopeKey of scopes) {
    for (const s of api.listSessions({ scopeKey }).filter((s) => s.status === 'running')) {
      await api.killSession(s.sessionId, { scopeKey }).catch(() => {});
    }
  }
});

test('exec in the container: completed, non-zero exit note, no output, command not found, timeout', when, async () => {
  const { exec, cwd, ...t } = tools({ profile: 'openclaw-2026-04' });
  const ok = await exec.execute('1', { command: 'echo hello; cat /proc/1/cmdline | tr "\\0" " " > pid1.txt' });
  assert.equal(text(ok), 'hello');
  assert.equal(ok.details.status, 'completed');
  assert.equal(ok.details.exitCode, 0);
  assert.match(fs.readFileSync(path.join(cwd, 'pid1.txt'), 'utf8'), /cat > \/dev\/null/, 'the run was in the container');
  await assertExitTexts(exec);
  const timeout = await exec.execute('5', { command: 'sleep 321', timeout: 1 });
  assert.equal(timeout.details.status, 'failed');
  assert.equal(timeout.details.timedOut, true);
  assert.match(text(timeout), /^Command timed out after 1 seconds?\./);
  assert.doesNotMatch(await running({ cwd, ...t }), /sleep 321/, 'the timed-out run is gone from the container');
});

test('exec yields to the background in the container; process polls, logs, lists and clears it', when, async () => {
  const { exec, process: proc } = tools({ profile: 'openclaw-2026-04' });
  const r = await exec.execute('1', { command: 'echo start; sleep 0.5; seq 1 250; exit 2', yieldMs: 100 });
  assert.equal(r.details.status, 'running');
  assert.match(text(r), /^Command still running \(session ([a-z]+-[a-z]+(-\d+)?), pid \d+\)\./);
  const id = r.details.sessionId;
  const listed = await proc.execute('2', { action: 'list' });
  assert.match(text(listed), new RegExp(`^${id} running   \\S+ :: echo start;`, 'm'));
  const { last, all } = await pollToExit(proc, id);
  assert.match(all, /start/);
  assert.match(text(last), /\n\nProcess exited with code 2\.$/);
  assert.equal(last.details.exitCode, 2);
  const log = await proc.execute('3', { action: 'log', sessionId: id });
  assert.match(text(log), /\n\n\[showing last 200 of 251 lines; pass offset\/limit to page\]$/);
  assert.equal(text(await proc.execute('4', { action: 'log', sessionId: id, offset: 0, limit: 2 })), 'start\n1');
  assert.equal(text(await proc.execute('6', { action: 'clear', sessionId: id })), `Cleared session ${id}.`);
  assert.equal(text(await proc.execute('7', { action: 'poll', sessionId: id })), `No session found for ${id}`);
});

test('a long output in the container stays within the text budget; the file on this host holds all of it', when, async () => {
  const { exec, process: proc } = tools();
  const r = await exec.execute('1', { command: 'seq 1 100000' });
  const t = text(r);
  assert.ok(t.length < 30000 + 300, `${t.length} chars of text`);
  const m = /\n\[\.\.\. (\d+) chars omitted; full output: (\/\S+) \.\.\.\]\n/.exec(t);
  assert.ok(m, t.slice(14000, 16000));
  assert.equal(fs.readFileSync(m[2], 'utf8').split('\n').filter(Boolean).length, 100000);
  const bg = await exec.execute('2', { command: 'seq 1 300000', background: true });
  await waitFor(async () => /Process exited/.test(text(await proc.execute('p', { action: 'poll', sessionId: bg.details.sessionId, timeout: 5000 }))), { what: 'the end', timeoutMs: 60000 });
  assert.equal(text(await proc.execute('3', { action: 'log', sessionId: bg.details.sessionId, offset: 150000, limit: 3 })), '150001\n150002\n150003');
  await proc.execute('x', { action: 'remove', sessionId: bg.details.sessionId });
});

test('process kill and remove end the whole tree inside the container', when, async () => {
  const t = tools();
  const { exec, process: proc } = t;
  const r = await exec.execute('1', { command: 'sleep 331 & (sleep 332 &); sleep 333', background: true });
  await waitFor(async () => /sleep 333/.test(await running(t)), { what: 'the tree to start', timeoutMs: 20000 });
  const k = await proc.execute('2', { action: 'kill', sessionId: r.details.sessionId });
  assert.equal(text(k), `Termination requested for session ${r.details.sessionId}.`);
  assert.doesNotMatch(await running(t), /sleep 33[123]/);
  const listed = await proc.execute('3', { action: 'list' });
  assert.match(text(listed), new RegExp(`^${r.details.sessionId} failed    \\S+ :: sleep 331`, 'm'));
  const bg = await exec.execute('4', { command: 'sleep 334', background: true });
  await waitFor(async () => /sleep 334/.test(await running(t)), { what: 'the second run to start', timeoutMs: 20000 });
  assert.equal(text(await proc.execute("5", { action: "remove", sessionId: bg.details.sessionId })), `Removed session ${bg.details.sessionId} (termination requested).`);
  assert.doesNotMatch(await running(t), /sleep 334/);
});

test('write with eof, submit, paste and a PTY session in the container driven by send-keys to completion', when, async () => {
  const { exec, process: proc } = tools();
  const piped = await exec.execute('1', { command: 'cat', background: true, pty: false });
  // Pipe runs have stdin closed: cat already ended.
  await waitFor(async () => /Process exited/.test(text(await proc.execute('p', { action: 'poll', sessionId: piped.details.sessionId }))), { what: 'cat', timeoutMs: 30000 });
  // An interrupted read fails: the loop goes on to the next prompt.
  const loop = `trap 'echo interrupted' INT; while :; do printf 'ready> '; IFS= read -r line || continue; echo "got[$line]"; [ "$line" = quit ] && exit 4; done`;
  const tty = await exec.execute('2', { command: loop, background: true, pty: true });
  const id = tty.details.sessionId;
  const shown = (needle) => waitFor(async () => (await proc.execute('p', { action: 'poll', sessionId: id, timeout: 500 })).details.aggregated.includes(needle), { what: JSON.stringify(needle), timeoutMs: 30000 });
  await shown('ready> ');
  const sent = await proc.execute('3', { action: 'send-keys', sessionId: id, literal: 'x = 6 * 7', keys: ['enter'] });
  assert.equal(text(sent), `Sent 10 bytes to session ${id}.`);
  await shown('got[x = 6 * 7]');
  assert.equal(text(await proc.execute('4', { action: 'paste', sessionId: id, text: 'pasted', bracketed: false })), `Pasted 6 chars to session ${id}.`);
  assert.equal(text(await proc.execute('5', { action: 'submit', sessionId: id })), `Submitted session ${id} (sent CR).`);
  await shown('got[pasted]');
  await proc.execute('6', { action: 'send-keys', sessionId: id, keys: ['C-c'] });
  await shown('interrupted');
  const unicode = await proc.execute('7', { action: 'write', sessionId: id, data: 'é🚀\r' });
  assert.equal(text(unicode), `Wrote 7 bytes to session ${id}.`);
  await shown('got[é🚀]');
  await proc.execute('8', { action: 'write', sessionId: id, data: 'quit\r' });
  const { last } = await pollToExit(proc, id);
  assert.equal(last.details.exitCode, 4, JSON.stringify(last.details));
});

test('a tool abort kills a foreground run in the container but not a backgrounded one', when, async () => {
  const t = tools();
  const ac = new AbortController();
  const pending = t.exec.execute('1', { command: 'sleep 341' }, ac.signal);
  await waitFor(async () => /sleep 341/.test(await running(t)), { what: 'the foreground run to start', timeoutMs: 20000 });
  ac.abort();
  const r = await pending;
  assert.equal(r.details.status, 'failed');
  assert.equal(text(r), 'Command aborted');
  assert.doesNotMatch(await running(t), /sleep 341/);
  const ac2 = new AbortController();
  const bg = await t.exec.execute('2', { command: 'sleep 342', yieldMs: 50 }, ac2.signal);
  assert.equal(bg.details.status, 'running');
  ac2.abort();
  await waitFor(async () => /sleep 342/.test(await running(t)), { what: 'the backgrounded run to be there', timeoutMs: 20000 });
  // Still there after the abort: ended by our kill, not by it.
  const killed = await api.killSession(bg.details.sessionId, { scopeKey: t.scopeKey });
  assert.equal(killed.exitSignal, 'SIGTERM', JSON.stringify(killed));
  assert.doesNotMatch(await running(t), /sleep 342/);
});

test('onUpdate streams from the container while running and stops after backgrounding', when, async () => {
  const updates = [];
  const t = tools();
  const r = await t.exec.execute('1', { command: 'echo a; sleep 0.3; echo b; sleep 0.5; echo c', yieldMs: 500 }, undefined, (u) => updates.push(u));
  assert.equal(r.details.status, 'running');
  const countAtYield = updates.length;
  assert.ok(countAtYield >= 1);
  assert.match(updates[0].content[0].text, /a/);
  const session = () => api.listSessions({ scopeKey: t.scopeKey }).find((s) => s.sessionId === r.details.sessionId);
  await waitFor(() => session()?.status === 'completed', { what: 'the end of the run', timeoutMs: 30000 });
  assert.match(session().tail, /c\n$/);
  assert.equal(await api.removeSession(r.details.sessionId, { scopeKey: t.scopeKey }), false);
  await new Promise((res) => setImmediate(res));
  assert.equal(updates.length, countAtYield, 'no updates after backgrounding');
});

test('notifyOnExit from the container: the system event once the background run ends', when, async () => {
  const events = [];
  const beats = [];
  const t = tools({ sessionKey: 'agent:c', notifyOnExit: true, onSystemEvent: (e, ctx) => events.push([e, ctx]), requestHeartbeat: (o) => beats.push(o) });
  const r = await t.exec.execute('1', { command: 'echo finished-in-container; exit 5', background: true });
  await waitFor(() => events.length === 1, { what: 'the exit event', timeoutMs: 30000 });
  assert.equal(events[0][0], `Exec completed (${r.details.sessionId.slice(0, 8)}, code 5) :: finished-in-container`);
  assert.equal(beats.length, 1);
});
