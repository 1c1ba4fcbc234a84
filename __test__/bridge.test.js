'use strict';
// The child-process bridge, with real signals and real children: a host's termination signal reaches a
// child in its own process group, the host still ends as Node would, a host with its own handler keeps
// running, and the listeners go away with the child.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');

const { alive, waitFor, track, killTracked, tempDir } = require('./helpers.js');
const { bridgeChildProcess } = require('../js/index.js');

test.after(killTracked);

const entry = JSON.stringify(path.join(__dirname, '..', 'js', 'index.js'));

/** A host that starts `sleep` in its own process group (so no group signal reaches it), bridged. */
function startHost(dir, { ownHandler = false } = {}) {
  const script = `
    const { spawn } = require('child_process');
    const fs = require('fs');
    const { bridgeChildProcess } = require(${entry});
    const child = spawn('sleep', ['1000'], { detached: true, stdio: 'ignore' });
    const seen = [];
    bridgeChildProcess(child, { onSignal: (s) => seen.push(s) });
    ${ownHandler ? "process.on('SIGTERM', () => fs.writeFileSync('" + dir + "/host-handled', seen.join(',')));" : ''}
    child.on('exit', (code, signal) => fs.writeFileSync('${dir}/child-exit', String(signal)));
    fs.writeFileSync('${dir}/child', String(child.pid));
    setInterval(() => {}, 1000);`;
  const host = spawn(process.execPath, ['-e', script], { stdio: 'ignore' });
  track(host.pid);
  const exited = new Promise((resolve) => host.on('exit', (code, signal) => resolve({ code, signal })));
  return { host, exited };
}

async function childPid(dir) {
  const file = path.join(dir, 'child');
  const pid = await waitFor(() => fs.existsSync(file) && Number(fs.readFileSync(file, 'utf8')), { what: 'the child' });
  track(pid);
  return pid;
}

for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) {
  test(`${signal} to the host reaches the bridged child, and the host still ends by it`, async () => {
    const dir = tempDir();
    const { host, exited } = startHost(dir);
    const child = await childPid(dir);
    host.kill(signal);
    const end = await exited;
    assert.equal(end.signal, signal, 'the host ended as Node ends by default');
    await waitFor(() => !alive(child), { what: `child ${child} to end` });
  });
}

test('a host with its own SIGTERM handler keeps running; the child gets the signal and the bridge detaches', async () => {
  const dir = tempDir();
  const { host } = startHost(dir, { ownHandler: true });
  const child = await childPid(dir);
  host.kill('SIGTERM');
  await waitFor(() => fs.existsSync(path.join(dir, 'child-exit')), { what: 'the child to exit' });
  assert.equal(fs.readFileSync(path.join(dir, 'child-exit'), 'utf8'), 'SIGTERM');
  assert.equal(fs.readFileSync(path.join(dir, 'host-handled'), 'utf8'), 'SIGTERM');
  assert.equal(alive(child), false);
  assert.equal(alive(host.pid), true, 'the host decides when it ends');
  host.kill('SIGKILL');
});

test('listeners are removed when the child exits or fails to start, and bad input is refused', async () => {
  const before = process.listenerCount('SIGTERM');
  const child = spawn('true', [], { stdio: 'ignore' });
  bridgeChildProcess(child);
  assert.equal(process.listenerCount('SIGTERM'), before + 1);
  await new Promise((r) => child.on('exit', r));
  assert.equal(process.listenerCount('SIGTERM'), before);
  const missing = spawn('/no/such/program-agent-exec', [], { stdio: 'ignore' });
  missing.on('error', () => {});
  bridgeChildProcess(missing);
  await new Promise((r) => missing.on('error', r));
  assert.equal(process.listenerCount('SIGTERM'), before);
  const sleeper = spawn('sleep', ['5'], { stdio: 'ignore' });
  track(sleeper.pid);
  const { detach } = bridgeChildProcess(sleeper, { signals: ['SIGUSR2'] });
  assert.equal(process.listenerCount('SIGUSR2'), 1);
  detach();
  assert.equal(process.listenerCount('SIGUSR2'), 0);
  sleeper.kill('SIGKILL');
  assert.throws(() => bridgeChildProcess({}), /needs a ChildProcess/);
  assert.throws(() => bridgeChildProcess(child, { signals: ['TERM'] }), /signal names/);
});
