'use strict';
// Working-directory tracking: `cd` carries over to the scope's next exec, over pipes and PTYs.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const { native, track, killTracked, tempDir } = require('./helpers.js');

test.after(killTracked);

async function run(options) {
  const r = await native.exec({ trackCwd: true, ...options });
  track(r.pid);
  return r;
}

test('cd carries over within a scope, over pipes and PTYs, and not into other scopes', async () => {
  const base = fs.realpathSync(tempDir());
  fs.mkdirSync(path.join(base, 'packages', 'x'), { recursive: true });
  const scope = `cwd-${process.pid}`;
  const first = await run({ command: 'cd packages/x', cwd: base, scopeKey: scope });
  assert.equal(first.finalCwd, path.join(base, 'packages', 'x'));
  const second = await run({ command: 'pwd; ls ..', scopeKey: scope });
  assert.equal(second.output, `${path.join(base, 'packages', 'x')}\nx\n`);
  const pty = await run({ command: 'cd ..; echo moved', pty: true, scopeKey: scope });
  assert.equal(pty.finalCwd, path.join(base, 'packages'));
  const third = await run({ command: 'pwd', scopeKey: scope });
  assert.equal(third.output, `${path.join(base, 'packages')}\n`);
  const other = await run({ command: 'pwd', scopeKey: `${scope}-other`, cwd: base });
  assert.equal(other.output, `${base}\n`);
  const untracked = await native.exec({ command: 'pwd', scopeKey: scope });
  assert.equal(untracked.output, `${process.cwd()}\n`, 'without trackCwd nothing changes');
  assert.equal(untracked.finalCwd, undefined);
});

test('the exit code survives the tracking, and an explicit cwd wins', async () => {
  const base = fs.realpathSync(tempDir());
  fs.mkdirSync(path.join(base, 'a'));
  const scope = `cwd-exit-${process.pid}`;
  const r = await run({ command: 'cd a; exit 3', cwd: base, scopeKey: scope });
  assert.equal(r.exitCode, 3);
  assert.equal(r.finalCwd, path.join(base, 'a'));
  const explicit = await run({ command: 'pwd', cwd: base, scopeKey: scope });
  assert.equal(explicit.output, `${base}\n`);
});

test('a cd into a directory that is then deleted falls back with a warning', async () => {
  const base = fs.realpathSync(tempDir());
  const doomed = path.join(base, 'doomed');
  fs.mkdirSync(doomed);
  const scope = `cwd-gone-${process.pid}`;
  await run({ command: 'cd doomed', cwd: base, scopeKey: scope });
  fs.rmSync(doomed, { recursive: true });
  const r = await run({ command: 'pwd', scopeKey: scope });
  assert.equal(r.status, 'completed');
  assert.equal(r.output, `${process.cwd()}\n`);
  assert.deepEqual(r.warnings, [`Warning: the tracked directory ${doomed} no longer exists; using ${process.cwd()}.`]);
});
