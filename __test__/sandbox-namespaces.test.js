'use strict';
// A sandboxed run lives in PID, IPC and UTS namespaces of its own where the host allows them (root, or
// a user namespace): the host's processes, SysV IPC objects and hostname are out of its reach, and an
// init that dies with the host takes every process of the run with it. Each attack checks the outside
// world (a process still alive, a queue still there, the agent's hostname), not only an exit code.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn, spawnSync } = require('node:child_process');

const { native, alive, waitFor, track, killTracked, tempDir, run, hostPids } = require('./helpers.js');

test.after(killTracked);

const caps = native.sandboxCapabilities();
const skip =
  (!caps.enforceable && `this host cannot sandbox: ${caps.problems.join('; ')}`) ||
  (!caps.processNamespaces && 'this host gives runs no PID namespace (needs root or user namespaces, and a /proc it can mount)');
const has = (tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0;

/** A unique token for process arguments (`sleep 600.<token>`). */
let serial = 0;
function token() {
  return `${process.pid}${Date.now() % 100000}${serial++}`;
}

/** The parent pid of `pid`, as this process sees it. */
function parentOf(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

/** The init of the PID namespace `pid` lives in: the process named so in the same namespace. */
function initOf(pid) {
  const ns = fs.readlinkSync(`/proc/${pid}/ns/pid`);
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (commOf(d) === 'agent-exec-init' && fs.readlinkSync(`/proc/${d}/ns/pid`) === ns) return Number(d);
    } catch {}
  }
  return null;
}

function commOf(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return null;
  }
}

test('the host\'s processes are invisible: not listed, not readable, not signalled', { skip }, async () => {
  // An outside process the command knows the pid of, as an attacker would (ps, $PPID, a pid file).
  const victim = spawn('sleep', ['600'], { stdio: 'ignore' });
  track(victim.pid);
  try {
    const r = await run({
      command: [
        'echo "self=$$"',
        'ls /proc | grep -cE "^[0-9]+$"',
        `kill -9 ${victim.pid} ${process.pid} 2>&1 || echo kill-failed`,
        `cat /proc/${process.pid}/cmdline >/dev/null 2>&1 || echo unreadable`,
        'ps -e -o comm= | sort | tr "\\n" " "',
      ].join('; '),
      cwd: tempDir(),
      sandbox: true,
    });
    assert.equal(r.exitCode, 0, r.output);
    assert.ok(r.sandbox.mechanisms.some((m) => /^PID, IPC and UTS namespaces/.test(m)), r.sandbox.mechanisms.join('; '));
    // The shell is pid 2 (the init is 1), and only the run's processes exist there.
    assert.match(r.output, /^self=2$/m);
    const count = Number(r.output.split('\n')[1]);
    assert.ok(count >= 2 && count <= 6, `the run saw ${count} processes:\n${r.output}`);
    assert.match(r.output, /No such process/);
    assert.match(r.output, /^kill-failed$/m);
    assert.match(r.output, /^unreadable$/m);
    assert.doesNotMatch(r.output, /\bnode\b/, 'the agent is listed');
    // The outside world: both processes live.
    assert.ok(alive(victim.pid), 'the outside sleep was killed');
    assert.ok(alive(process.pid));
  } finally {
    victim.kill('SIGKILL');
  }
});

test('the host\'s SysV message queues and shared memory are out of reach', { skip: skip || (!has('ipcmk') && 'ipcmk (util-linux) is not installed') }, async () => {
  const make = (flag) => {
    const out = spawnSync('ipcmk', [flag, ...(flag === '-M' ? ['4096'] : [])], { encoding: 'utf8' }).stdout;
    return Number(/id:\s*(\d+)/.exec(out)[1]);
  };
  const queue = make('-Q');
  const shm = make('-M');
  // `ipcs` lists the ids of a kind in its second column.
  const exists = (kind, id) => spawnSync('ipcs', [kind], { encoding: 'utf8' }).stdout.split('\n').some((l) => l.split(/\s+/)[1] === String(id));
  try {
    assert.ok(exists('-q', queue) && exists('-m', shm));
    const r = await run({
      command: `ipcrm -q ${queue} 2>&1; ipcrm -m ${shm} 2>&1; ipcs -q | awk '{print $2}' | grep -qx ${queue} || echo queue-unseen; ipcs -m | awk '{print $2}' | grep -qx ${shm} || echo shm-unseen`,
      cwd: tempDir(),
      sandbox: true,
    });
    assert.match(r.output, /^queue-unseen$/m);
    assert.match(r.output, /^shm-unseen$/m);
    // The outside world: both objects are still there.
    assert.ok(exists('-q', queue), 'the host\'s message queue was removed');
    assert.ok(exists('-m', shm), 'the host\'s shared memory was removed');
  } finally {
    spawnSync('ipcrm', ['-q', String(queue)]);
    spawnSync('ipcrm', ['-m', String(shm)]);
  }
});

test('the hostname cannot be changed, and the run sees the host\'s', { skip }, async () => {
  const before = fs.readFileSync('/proc/sys/kernel/hostname', 'utf8');
  const domain = fs.readFileSync('/proc/sys/kernel/domainname', 'utf8');
  const r = await run({
    command: 'cat /proc/sys/kernel/hostname; hostname pwned-by-sandbox 2>&1 || echo refused; domainname pwned 2>&1 || echo refused-domain; cat /proc/sys/kernel/hostname',
    cwd: tempDir(),
    sandbox: true,
  });
  assert.equal(r.output.split('\n')[0], before.trim());
  assert.match(r.output, /^refused$/m);
  assert.match(r.output, /^refused-domain$/m);
  assert.ok(r.sandbox.denials.some((d) => /sethostname/.test(d.detail)), JSON.stringify(r.sandbox.denials));
  assert.equal(fs.readFileSync('/proc/sys/kernel/hostname', 'utf8'), before);
  assert.equal(fs.readFileSync('/proc/sys/kernel/domainname', 'utf8'), domain);
});

test('runs alive at once each have network, IPC and UTS namespaces of their own, made ahead or not, and the host keeps none', { skip }, async () => {
  // Root's runs enter namespaces made ahead of them (a stock of two, refilled after each take); the
  // warm-up fills it, so the four runs below mix sets from the stock with sets made at spawn. They run
  // in the background: their sessions (and sandboxes) outlive them, as a finished background run's do.
  const scopeKey = 'namespace-stock';
  await run({ command: 'true', cwd: tempDir(), sandbox: true });
  const dirs = [0, 1, 2, 3].map(() => tempDir());
  const go = path.join(tempDir(), 'go');
  const wait = `i=0; while [ ! -e ${go} ] && [ $i -lt 2000 ]; do sleep 0.01; i=$((i+1)); done`;
  const started = [];
  try {
    for (const cwd of dirs) {
      const r = await native.exec({
        command: `readlink /proc/self/ns/net /proc/self/ns/ipc /proc/self/ns/uts > ns.tmp && mv ns.tmp ns; tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '; ${wait}`,
        cwd,
        sandbox: true,
        background: true,
        scopeKey,
      });
      track(r.pid);
      started.push(r.sessionId);
    }
    // All four are alive together here, so no namespace number can have been reused among them.
    await waitFor(() => dirs.every((d) => fs.existsSync(path.join(d, 'ns'))), { timeoutMs: 20000, what: 'every run to write its namespaces' });
  } finally {
    fs.writeFileSync(go, '');
  }
  const results = [];
  for (const id of started) {
    results.push(await waitFor(async () => {
      const p = await native.pollSession(id, { scopeKey, timeoutMs: 2000 });
      return p.status !== 'running' && p;
    }, { timeoutMs: 30000, what: 'the background runs to end' }));
  }
  const seen = dirs.map((d) => fs.readFileSync(path.join(d, 'ns'), 'utf8').trim().split('\n'));
  const host = ['net', 'ipc', 'uts'].map((k) => fs.readlinkSync(`/proc/self/ns/${k}`));
  for (const [k, kind] of ['net', 'ipc', 'uts'].entries()) {
    const ids = seen.map((lines) => lines[k]);
    assert.equal(new Set(ids).size, 4, `${kind}: ${ids.join(' ')}`);
    assert.ok(!ids.includes(host[k]), `a run was in the host's ${kind} namespace`);
  }
  for (const r of results) assert.equal(r.output.trim(), 'lo', r.output);
  // As root the stock is in use: some of the four entered a set made ahead (a user's runs make theirs
  // in their own user namespace).
  const ahead = results.filter((r) => r.sandbox.mechanisms.some((m) => /namespaces made ahead/.test(m)));
  if (process.getuid() === 0) assert.ok(ahead.length >= 1, results.map((r) => r.sandbox.mechanisms.join('; ')).join('\n'));
  else assert.equal(ahead.length, 0);
  // Their sessions are still there, yet the host holds none of their namespaces: what a run leaves in
  // its IPC namespace (a SysV segment nobody removed) goes with its last process, as with namespaces
  // made at spawn.
  const held = new Set();
  for (const fd of fs.readdirSync('/proc/self/fd')) {
    try {
      held.add(fs.readlinkSync(`/proc/self/fd/${fd}`));
    } catch {}
  }
  const kept = seen.flat().filter((id) => held.has(id));
  for (const id of started) await native.removeSession(id, { scopeKey });
  assert.deepEqual(kept, [], 'the host still holds namespaces of runs that ended');
});

test('background jobs outlive their shell; the init goes once they are gone, and is not reported', { skip }, async () => {
  const t = token();
  const r = await run({ command: `sleep 600.${t} & echo started`, cwd: tempDir(), sandbox: true, drainTimeoutMs: 300 });
  assert.equal(r.exitCode, 0, r.output);
  const [job] = hostPids(`600.${t}`);
  track(job);
  assert.ok(job, 'the background job was not running after its shell ended');
  // Its parent (the shell is gone) is the namespace's init, which the report leaves out.
  const init = parentOf(job);
  assert.equal(commOf(init), 'agent-exec-init');
  assert.ok(r.leftRunning.includes(job), JSON.stringify(r.leftRunning));
  assert.ok(!r.leftRunning.includes(init), JSON.stringify(r.leftRunning));
  process.kill(job, 'SIGKILL');
  await waitFor(() => !alive(init), { what: `the init ${init} to leave after the last process` });
});

test('the shell\'s exit code and signal come through the namespace unchanged', { skip }, async () => {
  const dir = tempDir();
  const code = await run({ command: 'exit 7', cwd: dir, sandbox: true });
  assert.equal(code.exitCode, 7);
  const term = await run({ command: 'kill -TERM $$', cwd: dir, sandbox: true });
  assert.equal(term.exitSignal, 'SIGTERM');
  assert.equal(term.exitCode ?? null, null);
  // The shell asks for no core; the relay that dies of the same signal must not dump the agent's
  // memory into the work tree either.
  const segv = await run({ command: 'ulimit -c 0; kill -SEGV $$', cwd: dir, sandbox: true });
  assert.equal(segv.exitSignal, 'SIGSEGV');
  assert.deepEqual(fs.readdirSync(dir).filter((f) => /^core/.test(f)), []);
});

test('a daemon that left the session and dropped the marker dies with a SIGKILLed host', { skip }, async () => {
  const t = token();
  const dir = tempDir();
  const script = `
    const ae = require(${JSON.stringify(path.join(__dirname, '..', 'js', 'index.js'))});
    ae.exec({ command: 'env -u AGENT_EXEC_SESSION setsid env -i /bin/sleep 600.${t} >/dev/null 2>&1 < /dev/null & sleep 600', cwd: ${JSON.stringify(dir)}, sandbox: true, background: true })
      .then(() => console.log('started'));
    setInterval(() => {}, 1000);
  `;
  const host = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  track(host.pid);
  let daemon;
  try {
    daemon = await waitFor(() => hostPids(`600.${t}`)[0], { what: 'the daemon to start' });
    track(daemon);
    const init = initOf(daemon);
    assert.ok(init, 'no init in the daemon\'s namespace');
    host.kill('SIGKILL');
    await waitFor(() => !alive(daemon), { what: `the daemon ${daemon} to die with its host` });
    await waitFor(() => !alive(init), { what: `the init ${init} to die with its host` });
  } finally {
    host.kill('SIGKILL');
  }
});

test('a process limit counts the command\'s processes, not the sandbox\'s own', { skip: skip || (!caps.limits.processes && 'no process limit mechanism here') }, async () => {
  // The shell and three jobs: four processes, the limit.
  const ok = await run({ command: 'sleep 0.3 & sleep 0.3 & sleep 0.3 & wait; echo all-ran', cwd: tempDir(), sandbox: { limits: { processes: 4 } } });
  assert.match(ok.output, /^all-ran$/m);
  // Not one fork was refused: bash retries a refused fork and would still print all-ran.
  assert.doesNotMatch(ok.output, /fork|retry|Resource temporarily unavailable/i, ok.output);
  assert.equal(ok.sandbox.limitExceeded, undefined, ok.sandbox.limitMessage);
  const over = await run({ command: 'for i in 1 2 3 4 5 6; do sleep 0.5 & done; wait; echo done', cwd: tempDir(), sandbox: { limits: { processes: 4 } } });
  assert.match(over.output, /fork|Resource temporarily unavailable|retry/i, over.output);
});

const tracking = native.processTracking();
test('a sandboxed run is born in its tracking cgroup, and its end leaves the cgroup to its own processes', {
  skip: skip || (tracking.mechanism !== 'cgroup' && `this host tracks runs by marker: ${tracking.reason}`),
}, async () => {
  // The shell's very first view of itself: already inside the run's cgroup (joining later would let
  // a first `setsid` escape it).
  const r = await run({ command: 'cat /proc/self/cgroup', cwd: tempDir(), sandbox: true });
  assert.equal(r.exitCode, 0, r.output);
  const line = tracking.cgroupVersion === 2
    ? r.output.split('\n').find((l) => l.startsWith('0::'))
    : r.output.split('\n').find((l) => /(^|,)pids(,|:)/.test(l.split(':')[1] ?? ''));
  assert.ok(line, r.output);
  assert.match(line, new RegExp(`/agent-exec-${process.pid}-`), r.output);
  assert.ok(r.sandbox.mechanisms.includes(`cgroup v${tracking.cgroupVersion} (tracking)`), r.sandbox.mechanisms.join());
  // The namespace's init, still leaving as the run ends, is not a process the run left behind.
  assert.deepEqual(r.leftRunning ?? [], []);
});

test('the namespace\'s init, which shares the agent\'s memory, does not show the agent\'s command line', { skip }, () => {
  // A host whose command line carries a secret, as agents started with tokens in argv do.
  const secret = `secret-${token()}`;
  const script = `
    const ae = require(${JSON.stringify(path.join(__dirname, '..', 'js', 'index.js'))});
    ae.exec({ command: 'ls /proc; for p in /proc/[0-9]*; do tr "\\\\0" " " < $p/cmdline; echo; done', cwd: ${JSON.stringify(tempDir())}, sandbox: true })
      .then((r) => console.log(JSON.stringify(r)));
  `;
  const out = spawnSync(process.execPath, ['-e', script, secret], { encoding: 'utf8', timeout: 30000 });
  assert.equal(out.status, 0, out.stderr);
  const r = JSON.parse(out.stdout);
  assert.equal(r.exitCode, 0, r.output);
  // The command sees its own processes (the shell at least), not the init, and nowhere the secret.
  assert.match(r.output, /^2$/m, r.output);
  assert.doesNotMatch(r.output, /^1$/m, r.output);
  assert.ok(!r.output.includes(secret), r.output);
});

test('a dead host\'s private temp dir is removed by the next host\'s first sandboxed run (what its watchdog missed)', {
  skip: !caps.enforceable && `this host cannot sandbox: ${caps.problems.join('; ')}`,
}, async () => {
  // The watchdog removes a SIGKILLed host's temp dirs at once (sandbox-small-world tests it); this is
  // the sweep behind it, for a host whose watchdog died with it. A dir named for a host pid no
  // process can have (above pid_max), in this PID namespace, of this user.
  const index = JSON.stringify(path.join(__dirname, '..', 'js', 'index.js'));
  const cwd = JSON.stringify(tempDir());
  const parent = path.join(os.tmpdir(), `agent-exec-sandbox-${process.getuid()}`);
  fs.mkdirSync(parent, { recursive: true, mode: 0o700 });
  const ns = fs.statSync('/proc/self/ns/pid').ino;
  const dead = path.join(parent, `agent-exec-sandbox-${ns}-9999999-test${process.pid}`);
  const alive_ = path.join(parent, `agent-exec-sandbox-${ns}-${process.pid}-test`);
  fs.mkdirSync(path.join(dead, '.dev-shm'), { recursive: true });
  fs.mkdirSync(alive_, { recursive: true });
  try {
    const next = spawnSync(process.execPath, ['-e', `require(${index}).exec({ command: 'true', cwd: ${cwd}, sandbox: true }).then((r) => console.log(r.exitCode))`], { encoding: 'utf8', timeout: 30000 });
    assert.equal(next.stdout.trim(), '0', next.stderr);
    assert.ok(!fs.existsSync(dead), `${dead} was left behind`);
    assert.ok(fs.existsSync(alive_), 'the temp dir of a live host was removed');
  } finally {
    fs.rmSync(dead, { recursive: true, force: true });
    fs.rmSync(alive_, { recursive: true, force: true });
  }
});
