'use strict';
// The sandbox's writable roots are the host's choice: not the directory a previous run cd'd into
// (trackCwd), not the model's workdir. A run that starts outside its roots runs there read-only.
// Each attack checks the outside world: the file it tried to write must not exist.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const { native, killTracked, tempDir, run } = require('./helpers.js');
const { createExecTool } = require('../js/index.js');

test.after(killTracked);

const caps = native.sandboxCapabilities();
const skip = !caps.enforceable && `this host cannot sandbox: ${caps.problems.join('; ')}`;

test('a run that cd-s elsewhere does not make that directory the next run\'s writable root', { skip }, async () => {
  const root = tempDir();
  const elsewhere = tempDir();
  const scopeKey = `roots-${process.pid}-${Date.now()}`;
  const first = await run({ command: `cd ${elsewhere}`, cwd: root, trackCwd: true, scopeKey, sandbox: true });
  assert.equal(first.exitCode, 0, first.output);
  assert.equal(native.trackedCwd(scopeKey), fs.realpathSync(elsewhere));
  // The next run starts in the tracked directory, but may still write only beneath the host's
  // directory, its root: `root` here (were it the runner's own cwd, /tmp say, `elsewhere` would lie
  // inside it and rightly be writable).
  const hostCwd = process.cwd();
  process.chdir(root);
  let second;
  try {
    second = await run({ command: 'pwd; touch escaped; true', trackCwd: true, scopeKey, sandbox: true });
  } finally {
    process.chdir(hostCwd);
  }
  assert.deepEqual(second.sandbox.writableRoots.filter((r) => r === fs.realpathSync(elsewhere)), []);
  assert.match(second.output, new RegExp(fs.realpathSync(elsewhere)));
  assert.equal(fs.existsSync(path.join(elsewhere, 'escaped')), false, 'wrote in the tracked directory');
  assert.ok(second.sandbox.denials.length > 0, JSON.stringify(second.sandbox));
  // Writes beneath the root still work from a run that starts there.
  const third = await run({ command: 'touch inside', cwd: root, sandbox: true });
  assert.equal(third.exitCode, 0, third.output);
  assert.ok(fs.existsSync(path.join(root, 'inside')));
});

test('the model\'s workdir does not become the writable root; the text says it runs read-only', { skip }, async () => {
  const root = tempDir();
  const elsewhere = tempDir();
  const tool = createExecTool({ sandbox: true, cwd: root });
  for (const workdir of [elsewhere, '/']) {
    const target = path.join(workdir === '/' ? elsewhere : workdir, 'escaped');
    const r = await tool.execute('t', { command: `touch ${target}`, workdir });
    assert.equal(fs.existsSync(target), false, `workdir ${workdir} was writable`);
    assert.match(r.content[0].text, /outside the sandbox's writable roots .*read-only/);
  }
  // The host's directory stays writable, and relative roots are beneath it, not beneath the workdir.
  fs.mkdirSync(path.join(root, 'sub'));
  const relative = createExecTool({ sandbox: { writableRoots: ['sub'] }, cwd: root });
  const r = await relative.execute('t', { command: `touch ${path.join(root, 'sub', 'ok')} && touch ${path.join(elsewhere, 'sub-escaped')}; true`, workdir: elsewhere });
  assert.ok(fs.existsSync(path.join(root, 'sub', 'ok')), r.content[0].text);
  assert.equal(fs.existsSync(path.join(elsewhere, 'sub-escaped')), false);
  const inside = await tool.execute('t', { command: 'touch made-here' });
  assert.ok(fs.existsSync(path.join(root, 'made-here')), inside.content[0].text);
  assert.doesNotMatch(inside.content[0].text, /read-only/);
});

/**
 * Try to change the agent's own process (`host`) from a sandboxed python: its limits (a CPU limit of
 * 1 s would SIGKILL it), priority and CPUs, and the command's own process, which must still work. Runs
 * in this process, or in a child node with `env` (for the other mechanism). Returns the run's result.
 */
async function changeAnotherProcess(host, env) {
  const dir = tempDir();
  const script = [
    'import os, resource',
    'def attempt(name, f):',
    '    try:',
    '        f()',
    '        print(name, "changed")',
    '    except OSError as e:',
    '        print(name, "refused", e.errno)',
    `attempt("prlimit", lambda: resource.prlimit(${host}, resource.RLIMIT_NOFILE, (64, 64)))`,
    `attempt("prlimit-cpu", lambda: resource.prlimit(${host}, resource.RLIMIT_CPU, (1, 1)))`,
    `attempt("setpriority", lambda: os.setpriority(os.PRIO_PROCESS, ${host}, 19))`,
    `attempt("affinity", lambda: os.sched_setaffinity(${host}, {0}))`,
    // Its own process may still change itself, by 0 or by its own pid.
    'attempt("own-prlimit", lambda: resource.prlimit(0, resource.RLIMIT_NOFILE, (256, 256)))',
    'attempt("own-prlimit-pid", lambda: resource.prlimit(os.getpid(), resource.RLIMIT_NOFILE, (200, 200)))',
    'attempt("own-nice", lambda: os.nice(5))',
    'attempt("own-priority-pid", lambda: os.setpriority(os.PRIO_PROCESS, os.getpid(), 7))',
  ].join('\n');
  fs.writeFileSync(path.join(dir, 'attack.py'), script);
  const options = { command: 'python3 attack.py', cwd: dir, sandbox: true };
  if (!env) return run(options);
  const child = require('node:child_process').spawnSync(
    process.execPath,
    ['-e', `require(${JSON.stringify(path.join(__dirname, '..', 'js', 'index.js'))}).exec(${JSON.stringify(options)}).then((r) => console.log(JSON.stringify(r)))`],
    { env: { ...process.env, ...env }, encoding: 'utf8', timeout: 60000 },
  );
  assert.equal(child.status, 0, child.stderr);
  return JSON.parse(child.stdout);
}

function assertOwnChangesWork(r) {
  for (const own of ['own-prlimit', 'own-prlimit-pid', 'own-nice', 'own-priority-pid']) {
    assert.match(r.output, new RegExp(`^${own} changed$`, 'm'));
  }
}

function agentState(host) {
  return {
    limits: fs.readFileSync(`/proc/${host}/limits`, 'utf8'),
    nice: Number(fs.readFileSync(`/proc/${host}/stat`, 'utf8').split(') ')[1].split(' ')[16]),
    cpus: /Cpus_allowed_list:\s*(\S+)/.exec(fs.readFileSync(`/proc/${host}/status`, 'utf8'))[1],
  };
}

test('a sandboxed command cannot change another process (the agent itself): in its PID namespace the agent does not exist', { skip: skip || (!caps.processNamespaces && 'this host gives runs no PID namespace (needs root or user namespaces)') }, async () => {
  const host = process.pid;
  const before = agentState(host);
  const r = await changeAnotherProcess(host);
  assert.ok(r.sandbox.mechanisms.some((m) => /^PID, IPC and UTS namespaces/.test(m)), r.sandbox.mechanisms.join('; '));
  // ESRCH: no process of that number exists where the command lives.
  for (const call of ['prlimit', 'prlimit-cpu', 'setpriority', 'affinity']) {
    assert.match(r.output, new RegExp(`^${call} refused 3$`, 'm'), r.output);
  }
  assertOwnChangesWork(r);
  // The outside world: the agent's limits, priority and CPUs are as they were.
  assert.deepEqual(agentState(host), before);
});

test('a sandboxed command cannot change another process (the agent itself): without a PID namespace the filter refuses and records it', { skip }, async () => {
  // The host's switch takes the namespaces away, as a host without them would.
  const host = process.pid;
  const before = agentState(host);
  const r = await changeAnotherProcess(host, { AGENT_EXEC_NO_PID_NAMESPACE: '1' });
  assert.ok(!r.sandbox.mechanisms.some((m) => /^PID, IPC and UTS namespaces/.test(m)), r.sandbox.mechanisms.join('; '));
  assert.ok(r.sandbox.mechanisms.some((m) => /^changes to other processes .* refused, and System V IPC .*: no PID or IPC namespace here$/.test(m)), r.sandbox.mechanisms.join("; "));
  for (const call of ['prlimit', 'prlimit-cpu', 'setpriority', 'affinity']) {
    assert.match(r.output, new RegExp(`^${call} refused 1$`, 'm'), r.output);
  }
  assertOwnChangesWork(r);
  assert.deepEqual(agentState(host), before);
  const refused = r.sandbox.denials.filter((d) => d.rule === 'no changes to processes outside the caller').map((d) => d.detail);
  for (const call of [`prlimit64(pid ${host})`, `setpriority(pid ${host})`, `sched_setaffinity(pid ${host})`]) {
    assert.ok(refused.includes(call), `${call} not in ${JSON.stringify(r.sandbox.denials)}`);
  }
});
