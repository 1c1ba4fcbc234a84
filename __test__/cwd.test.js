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

test('the tracking is invisible to the command: bash errors quote only its text, line numbers are its own', async () => {
  const base = fs.realpathSync(tempDir());
  const shell = { shell: '/bin/bash' };
  for (const sandbox of [undefined, { writableRoots: [base] }]) {
    if (sandbox && !native.sandboxCapabilities().enforceable) continue;
    const how = sandbox ? 'sandboxed' : 'plain';
    // A syntax error: bash quotes the offending line, which must be the model's, as without tracking.
    const tracked = await run({ command: 'echo (', cwd: base, sandbox, ...shell });
    const plain = await native.exec({ command: 'echo (', cwd: base, sandbox, ...shell });
    assert.equal(tracked.output, plain.output, how);
    assert.doesNotMatch(tracked.output, /trap|AGENT_EXEC/, how);
    const lines = await run({ command: 'echo "$LINENO"\ncd / && echo "$LINENO"', cwd: base, sandbox, ...shell });
    assert.equal(lines.output, '1\n2\n', how);
    assert.equal(lines.finalCwd, '/', how);
    // A bash the command starts does not inherit the trap (it would report its own directory).
    const child = await run({ command: 'bash -c "cd /; echo inner"; echo "[$BASH_ENV]"', cwd: base, sandbox, ...shell });
    assert.equal(child.output, 'inner\n[]\n', how);
    assert.equal(child.finalCwd, base, how);
  }
  // The caller's own BASH_ENV is still read, and handed on to the command's children.
  const rc = path.join(base, 'rc.sh');
  fs.writeFileSync(rc, 'export FROM_RC=yes\n');
  const own = await run({ command: 'cd / && echo "$FROM_RC $BASH_ENV"', cwd: base, env: { BASH_ENV: rc }, shell: '/bin/bash' });
  assert.equal(own.output, `yes ${rc}\n`);
  assert.equal(own.finalCwd, '/');
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

test('the exec tool carries cd over with trackCwd, and an explicit workdir wins', async () => {
  const api = require('../js/index.js');
  const base = fs.realpathSync(tempDir());
  fs.mkdirSync(path.join(base, 'packages/x'), { recursive: true });
  const scopeKey = `agent:cwd-tool-${process.pid}`;
  const exec = api.createExecTool({ cwd: base, scopeKey, trackCwd: true });
  const text = (r) => r.content[0].text;
  assert.equal(text(await exec.execute('1', { command: 'pwd' })), base);
  const moved = await exec.execute('2', { command: 'cd packages/x' });
  assert.equal(text(moved), `(no output)\n\n(cwd is now ${path.join(base, 'packages/x')})`);
  assert.equal(moved.details.cwd, base);
  assert.equal(moved.details.finalCwd, path.join(base, 'packages/x'));
  assert.equal(api.trackedCwd(scopeKey), path.join(base, 'packages/x'));
  // Line numbers are the command's own, not shifted by the tracking.
  const lines = await exec.execute('2b', { command: 'echo "line $LINENO"\nno-such-command-xyz 2>&1' });
  assert.match(text(lines), /^line 1\n.*line 2: no-such-command-xyz: command not found/);
  assert.equal(lines.details.finalCwd, undefined, 'no move, no finalCwd');
  const next = await exec.execute('3', { command: 'pwd' });
  assert.equal(text(next), path.join(base, 'packages/x'));
  assert.equal(next.details.cwd, path.join(base, 'packages/x'));
  // PTY runs share the tracking.
  await exec.execute('4', { command: 'cd ..', pty: true });
  assert.equal(text(await exec.execute('5', { command: 'pwd' })), path.join(base, 'packages'));
  assert.equal(text(await exec.execute('6', { command: 'pwd', workdir: base })), base);
  // The explicit workdir run moved the scope back to base; a deleted tracked directory falls back.
  await exec.execute('7', { command: 'mkdir -p doomed && cd doomed' });
  fs.rmSync(path.join(base, 'doomed'), { recursive: true });
  const fell = await exec.execute('8', { command: 'pwd' });
  assert.equal(text(fell), `Warning: the tracked directory ${path.join(base, 'doomed')} no longer exists; using ${base}.\n\n${base}`);
  // Without trackCwd the tool behaves as OpenClaw's: every run starts in the configured cwd.
  const plain = api.createExecTool({ cwd: base, scopeKey });
  assert.equal(text(await plain.execute('9', { command: 'pwd' })), base);
  assert.equal(api.trackedCwd('agent:never-used'), null);
});

test('resolveWorkdir: the model workdir over the host cwd, the tracked directory with trackCwd, and OpenClaw warnings when one is gone', async () => {
  const base = fs.realpathSync(tempDir());
  fs.mkdirSync(path.join(base, 'sub', 'deep'), { recursive: true });
  const scope = `resolve-${process.pid}`;
  assert.deepEqual(native.resolveWorkdir({ workdir: 'sub', cwd: base }), { cwd: path.join(base, 'sub'), warnings: [], unavailable: false });
  assert.deepEqual(native.resolveWorkdir({ workdir: ' sub/deep/../deep ', cwd: base }), { cwd: path.join(base, 'sub', 'deep'), warnings: [], unavailable: false });
  assert.deepEqual(native.resolveWorkdir({ workdir: 'nope', cwd: base }), {
    cwd: base,
    warnings: [`Warning: workdir "nope" is unavailable; using "${base}".`],
    unavailable: true,
  });
  // What the model sends is not always a string: ignored, as a blank one is.
  for (const workdir of [42, null, { path: 'sub' }, ['sub'], '   ']) {
    assert.deepEqual(native.resolveWorkdir({ workdir, cwd: base }), { cwd: base, warnings: [], unavailable: false }, JSON.stringify(workdir));
  }
  assert.equal(native.resolveWorkdir({}).cwd, process.cwd());
  assert.equal(native.resolveWorkdir({ cwd: path.join(base, 'missing') }).cwd, require('node:os').homedir());

  // A run that cd's leaves the scope's tracked directory; trackCwd follows it until it is gone.
  const r = await native.exec({ command: 'cd sub/deep', cwd: base, trackCwd: true, scopeKey: scope });
  track(r.pid);
  const deep = path.join(base, 'sub', 'deep');
  assert.deepEqual(native.resolveWorkdir({ cwd: base, trackCwd: true, scopeKey: scope }), { cwd: deep, warnings: [], unavailable: false });
  assert.equal(native.resolveWorkdir({ cwd: base, scopeKey: scope }).cwd, base, 'without trackCwd the tracked directory is not used');
  assert.equal(native.resolveWorkdir({ cwd: base, trackCwd: true, scopeKey: `${scope}-other` }).cwd, base);
  assert.equal(native.resolveWorkdir({ workdir: 'sub', cwd: base, trackCwd: true, scopeKey: scope }).cwd, path.join(base, 'sub'));
  fs.rmSync(deep, { recursive: true });
  assert.deepEqual(native.resolveWorkdir({ cwd: base, trackCwd: true, scopeKey: scope }), {
    cwd: base,
    warnings: [`Warning: the tracked directory ${deep} no longer exists; using ${base}.`],
    // The model asked for no workdir: only the tracked one is gone.
    unavailable: false,
  });
});

test('tightenApproval: a call can only make the host modes stricter; unknown values change nothing', () => {
  const t = native.tightenApproval;
  assert.deepEqual(t({}), { security: 'full', ask: 'off' });
  assert.deepEqual(t({ security: 'allowlist', ask: 'on-miss' }, { security: 'full', ask: 'off' }), { security: 'allowlist', ask: 'on-miss' });
  assert.deepEqual(t({ security: 'full', ask: 'off' }, { security: 'deny', ask: 'always' }), { security: 'deny', ask: 'always' });
  assert.deepEqual(t({ security: ' Allowlist ', ask: 'ON-MISS' }, {}), { security: 'allowlist', ask: 'on-miss' });
  for (const bad of ['yolo', 42, null, { level: 'full' }, '']) {
    assert.deepEqual(t({ security: 'allowlist', ask: 'on-miss' }, { security: bad, ask: bad }), { security: 'allowlist', ask: 'on-miss' }, String(bad));
  }
  // Every order of the three levels: the result is the stricter of the two.
  const sec = ['deny', 'allowlist', 'full'];
  const ask = ['off', 'on-miss', 'always'];
  for (const a of sec) for (const b of sec) assert.equal(t({ security: a }, { security: b }).security, sec[Math.min(sec.indexOf(a), sec.indexOf(b))]);
  for (const a of ask) for (const b of ask) assert.equal(t({ ask: a }, { ask: b }).ask, ask[Math.max(ask.indexOf(a), ask.indexOf(b))]);
});
