'use strict';
// The sandbox of exec: file rules, protected paths, the network cut, limits, PTYs, reports, errors.
// Everything runs real commands under the real kernel mechanisms (Landlock, seccomp, cgroups).

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { spawn, spawnSync } = require('node:child_process');

const { native, alive, waitFor, track, killTracked, tempDir, run, hostPids, worldReadableEntry } = require('./helpers.js');

test.after(killTracked);

/** Every process of an ended run is gone (the run's own pids and whatever it left running). */
async function assertNothingLeft(r) {
  const pids = [r.pid, ...r.leftRunning, ...r.survivors].filter((p) => p > 0);
  await waitFor(() => pids.every((p) => !alive(p)), { what: `the processes of ${r.sessionId} to end` });
}

const outside = () => path.join('/etc', `agent-exec-sandbox-${process.pid}-${Date.now()}`);

// What the host can enforce decides which tests can run here; a host that cannot sandbox must refuse
// (tested below), and the README says what each mechanism needs.
const caps = native.sandboxCapabilities();
const needs = {
  sandbox: !caps.enforceable && `this host cannot sandbox: ${caps.problems.join('; ')}`,
  cgroupMemory: caps.limits.memoryBytes !== 'cgroup' && 'no writable cgroup with the memory controller here',
  cgroupPids: caps.limits.processes !== 'cgroup' && 'no writable cgroup with the pids controller here',
};
const when = (...reasons) => ({ skip: reasons.find(Boolean) || false });
const noSetpriv = spawnSync('setpriv', ['--version']).status !== 0 && 'setpriv (util-linux) is not installed';

// scripts/cross.sh test-arm64 sets this: under qemu-user the addon's system calls go through the
// emulator, which does not implement Landlock, while the probe below runs natively.
const underQemu = process.env.AGENT_EXEC_UNDER_QEMU === '1' && 'under qemu-user, which does not implement Landlock: the addon sees ABI 0 where the kernel has one';

test('capabilities are reported as this kernel has them', { skip: underQemu }, async () => {
  assert.equal(caps.platform, 'linux');
  // The ABI the kernel reports for LANDLOCK_CREATE_RULESET_VERSION, asked independently of the addon.
  const probe = spawnSync('python3', ['-c', 'import ctypes; r = ctypes.CDLL(None, use_errno=True).syscall(444, None, 0, 1); print(max(r, 0))'], { encoding: 'utf8' });
  assert.equal(caps.landlockAbi, Number(probe.stdout.trim()));
  assert.equal(caps.noNewPrivs, true);
  assert.equal(caps.rlimits, true);
  assert.equal(caps.limits.cpuSeconds, caps.enforceable ? 'rlimit' : undefined);
  // Read-only mounts are made in a run's own mount namespace, so only where one can be made.
  assert.ok(!caps.readOnlyMounts || caps.readOnlyBinds);
  if (caps.cgroupVersion) {
    assert.ok([1, 2].includes(caps.cgroupVersion));
  }
  if (caps.enforceable) {
    assert.deepEqual(caps.problems, []);
    assert.equal(caps.seccomp, true);
    assert.ok(caps.landlockAbi >= 1);
  } else {
    // A host that cannot enforce a sandbox refuses one, with the reason, and runs nothing.
    assert.ok(caps.problems.length > 0);
    const dir = tempDir();
    await assert.rejects(native.exec({ command: 'touch ran', cwd: dir, sandbox: true }), { code: 'ERR_SANDBOX_UNAVAILABLE' });
    assert.equal(fs.existsSync(path.join(dir, 'ran')), false);
  }
});

test('writes inside the cwd work, outside they fail and the denial names path and rule; reads work', when(needs.sandbox), async () => {
  const dir = tempDir();
  const target = outside();
  const r = await run({
    command: `echo in > inside.txt && echo wrote; echo out > ${target}; head -c 1 /etc/hostname >/dev/null && echo read-ok; echo tmp > "$TMPDIR/t" && echo tmp-ok`,
    cwd: dir,
    sandbox: true,
  });
  assert.equal(r.status, 'completed');
  assert.equal(fs.readFileSync(path.join(dir, 'inside.txt'), 'utf8'), 'in\n');
  assert.equal(fs.existsSync(target), false);
  assert.match(r.output, /wrote\n/);
  assert.match(r.output, /Permission denied/);
  assert.match(r.output, /read-ok\n/);
  assert.match(r.output, /tmp-ok\n/);
  const s = r.sandbox;
  assert.deepEqual(s.writableRoots, [fs.realpathSync(dir), s.tmpDir]);
  assert.equal(s.network, false);
  assert.ok(s.landlockAbi >= 1);
  assert.ok(s.mechanisms.some((m) => m.startsWith('landlock')), s.mechanisms.join());
  assert.deepEqual(
    s.denials.map((d) => [d.operation, d.path, d.rule, d.detail]),
    [['write', target, 'outside the writable roots', 'openat(O_WRONLY|O_CREAT|O_TRUNC)']],
  );
  assert.ok(s.denials[0].pid > 0);
  await assertNothingLeft(r);
});

test('every kind of write outside the roots is refused and reported', when(needs.sandbox), async () => {
  const dir = tempDir();
  const other = tempDir(); // outside the sandbox's roots
  fs.writeFileSync(path.join(other, 'existing'), 'keep\n');
  const r = await run({
    command: [
      `mkdir ${other}/newdir`,
      `rm -f ${other}/existing`,
      `mv ${other}/existing ${other}/moved`,
      `ln -s /tmp ${other}/link`,
      `truncate -s 0 ${other}/existing`,
      `cp ${other}/existing copy.txt && echo copied`,
    ].join('; '),
    cwd: dir,
    sandbox: true,
  });
  assert.equal(fs.readFileSync(path.join(other, 'existing'), 'utf8'), 'keep\n');
  assert.deepEqual(fs.readdirSync(other).sort(), ['existing']);
  assert.match(r.output, /copied/);
  const ops = new Set(r.sandbox.denials.map((d) => d.operation));
  for (const op of ['mkdir', 'remove', 'rename', 'symlink']) assert.ok(ops.has(op), `${op} in ${[...ops]}`);
  assert.ok(
    r.sandbox.denials.some((d) => d.path === path.join(fs.realpathSync(other), 'existing') && ['write', 'truncate'].includes(d.operation)),
    JSON.stringify(r.sandbox.denials),
  );
  await assertNothingLeft(r);
});

test('no set-user-ID or set-group-ID file is made inside the roots; a set-group-ID directory is', when(needs.sandbox), async () => {
  const dir = fs.realpathSync(tempDir());
  const r = await run({
    command: [
      'cp /bin/true x && chmod 755 x',
      '{ chmod 4755 x; chmod u+s x; chmod 2755 x; } 2>/dev/null',
      `python3 -c "import os; os.fchmod(os.open('x', os.O_RDONLY), 0o4755)" 2>/dev/null`,
      `python3 -c "import os; os.open('y', os.O_WRONLY | os.O_CREAT, 0o4755)" 2>/dev/null`,
      'mkdir d && chmod 2775 d && echo dir-ok',
    ].join('; '),
    cwd: dir,
    sandbox: { writableRoots: [dir] },
  });
  assert.match(r.output, /dir-ok/, r.output);
  assert.equal(fs.statSync(path.join(dir, 'x')).mode & 0o7777, 0o755);
  assert.equal(fs.existsSync(path.join(dir, 'y')), false);
  assert.equal(fs.statSync(path.join(dir, 'd')).mode & 0o2000, 0o2000);
  const setId = r.sandbox.denials.filter((d) => /set-user-ID/.test(d.rule)).map((d) => d.detail);
  for (const call of ['fchmodat', 'fchmod', 'openat']) assert.ok(setId.some((d) => d.startsWith(call)), `${call} in ${setId}`);
});

test('metadata of files outside the roots cannot change: chmod, chown, times, xattrs', when(needs.sandbox), async () => {
  const dir = tempDir();
  const other = tempDir();
  const file = path.join(fs.realpathSync(other), 'keep');
  fs.writeFileSync(file, 'x');
  fs.chmodSync(file, 0o644);
  const before = fs.statSync(file);
  const r = await run({
    command: [
      `chmod 777 ${file}`,
      `chown 1:1 ${file}`,
      `touch -d 2001-01-01 ${file}`,
      `python3 -c "import os; fd = os.open('${file}', os.O_RDONLY); os.fchmod(fd, 0o600)"`,
      // An execute bit through a descriptor is the supervisor's always (it re-enables a hook).
      `python3 -c "import os; fd = os.open('${file}', os.O_RDONLY); os.fchmod(fd, 0o755)"`,
      `setfattr -n user.x -v 1 ${file} 2>/dev/null || python3 -c "import os; os.setxattr('${file}', 'user.x', b'1')"`,
      'echo in > mine && chmod 600 mine && touch -d 2001-01-01 mine && echo inside-ok',
    ].join('; '),
    cwd: dir,
    sandbox: true,
  });
  const after = fs.statSync(file);
  assert.equal(after.mode, before.mode);
  assert.equal(after.uid, before.uid);
  assert.equal(after.mtimeMs, before.mtimeMs);
  assert.match(r.output, /inside-ok/);
  assert.equal(fs.statSync(path.join(dir, 'mine')).mode & 0o777, 0o600);
  const seen = new Set(r.sandbox.denials.filter((d) => d.path === file).map((d) => `${d.operation} ${d.detail}`));
  // Through a descriptor the kernel refuses (a read-only mount) where the report says it decides;
  // else the supervisor refuses and records it.
  const byKernel = r.sandbox.mechanisms.some((m) => m.startsWith('metadata changes through a descriptor'));
  if (byKernel) assert.match(r.output, /Read-only file system/);
  const wanted = ['chmod fchmodat', 'chown fchownat', 'utime utimensat', ...(byKernel ? [] : ['chmod fchmod'])];
  for (const want of wanted) assert.ok(seen.has(want), `${want} in ${[...seen]}`);
  assert.ok(r.sandbox.denials.some((d) => d.path === file && d.detail === 'fchmod'), 'fchmod +x was not judged');
  // Where the run can reach host services (the network on, or unixSockets), a descriptor could come
  // from one, on the host's writable mount: the supervisor judges fchmod again, and records it.
  const reachable = await run({
    command: `python3 -c "import os; fd = os.open('${file}', os.O_RDONLY); os.fchmod(fd, 0o600)"`,
    cwd: dir,
    sandbox: { network: true },
  });
  assert.equal(reachable.sandbox.mechanisms.some((m) => m.startsWith('metadata changes through a descriptor')), false);
  assert.ok(reachable.sandbox.denials.some((d) => d.path === file && d.operation === 'chmod' && d.detail === 'fchmod'), JSON.stringify(reachable.sandbox.denials));
  assert.equal(fs.statSync(file).mode, before.mode);
  assert.ok([...seen].some((x) => x.startsWith('xattr ')), [...seen].join());
});

test('writableRoots replaces the cwd; [] leaves only the private temp dir', when(needs.sandbox), async () => {
  const dir = tempDir();
  const extra = tempDir();
  const r = await run({ command: `echo a > ${extra}/a && echo b > b.txt`, cwd: dir, sandbox: { writableRoots: [extra] } });
  assert.ok(fs.existsSync(path.join(extra, 'a')));
  assert.equal(fs.existsSync(path.join(dir, 'b.txt')), false);
  assert.equal(r.sandbox.denials[0].path, path.join(fs.realpathSync(dir), 'b.txt'));
  const ro = await run({ command: 'echo x > x.txt; echo y > "$TMPDIR/y" && cat "$TMPDIR/y"', cwd: dir, sandbox: { writableRoots: [] } });
  assert.equal(fs.existsSync(path.join(dir, 'x.txt')), false);
  assert.match(ro.output, /^y$/m);
  assert.deepEqual(ro.sandbox.writableRoots, [ro.sandbox.tmpDir]);
  // The private temp dir belongs to the run and goes with it.
  await waitFor(() => !fs.existsSync(ro.sandbox.tmpDir), { what: 'the temp dir to be removed' });
});

test('.git/hooks, .git/config and rc files cannot be written inside a writable root', when(needs.sandbox), async () => {
  const repo = tempDir();
  fs.mkdirSync(path.join(repo, '.git/hooks'), { recursive: true });
  fs.writeFileSync(path.join(repo, '.git/config'), '[core]\n');
  fs.writeFileSync(path.join(repo, '.bashrc'), '# mine\n');
  const r = await run({
    command: [
      'echo evil > .git/hooks/pre-commit',
      'echo "[core] fsmonitor = evil" >> .git/config',
      'mkdir .git/hooks/sub',
      'echo evil >> .bashrc',
      'echo ok > .git/index.lock && echo git-dir-writable',
    ].join('; '),
    cwd: repo,
    env: { HOME: repo },
    sandbox: true,
  });
  assert.deepEqual(fs.readdirSync(path.join(repo, '.git/hooks')), []);
  assert.equal(fs.readFileSync(path.join(repo, '.git/config'), 'utf8'), '[core]\n');
  assert.equal(fs.readFileSync(path.join(repo, '.bashrc'), 'utf8'), '# mine\n');
  assert.match(r.output, /git-dir-writable/);
  const real = fs.realpathSync(repo);
  const rules = r.sandbox.denials.map((d) => `${d.operation} ${d.path} :: ${d.rule}`);
  assert.ok(rules.includes(`write ${real}/.git/hooks/pre-commit :: protected path ${real}/.git/hooks`), rules.join('\n'));
  assert.ok(rules.includes(`write ${real}/.git/config :: protected path ${real}/.git/config`), rules.join('\n'));
  assert.ok(rules.includes(`mkdir ${real}/.git/hooks/sub :: protected path ${real}/.git/hooks`), rules.join('\n'));
  assert.ok(rules.includes(`write ${real}/.bashrc :: protected path ${real}/.bashrc`), rules.join('\n'));
  assert.ok(r.sandbox.protectedPaths.includes(`${real}/.git/hooks`));
  assert.ok(r.sandbox.mechanisms.includes('read-only binds (mount namespace)'), r.sandbox.mechanisms.join());
});

test('a missing .git/hooks cannot be created either', when(needs.sandbox), async () => {
  const repo = tempDir();
  fs.mkdirSync(path.join(repo, '.git'));
  fs.writeFileSync(path.join(repo, '.git/config'), '[core]\n');
  const r = await run({ command: 'mkdir -p .git/hooks && echo x > .git/hooks/post-checkout', cwd: repo, sandbox: true });
  assert.equal(fs.existsSync(path.join(repo, '.git/hooks')), false);
  assert.equal(r.sandbox.denials[0].operation, 'mkdir');
  assert.match(r.sandbox.denials[0].rule, /^protected path .*\.git\/hooks$/);
});

/** A listener that records what each connection sends: on a Unix socket `file`, else on a loopback port. */
async function listener(file) {
  const got = [];
  const server = net.createServer((s) => s.on('data', (d) => got.push(String(d))));
  await new Promise((res) => (file ? server.listen(file, res) : server.listen(0, '127.0.0.1', res)));
  return { server, got, port: file ? undefined : server.address().port };
}

test('network off: connecting to a local listener fails and is reported; network on: it works', when(needs.sandbox), async () => {
  const { server, got, port } = await listener();
  try {
    const off = await run({ command: `echo hi > /dev/tcp/127.0.0.1/${port} && echo sent`, sandbox: true, cwd: tempDir() });
    assert.doesNotMatch(off.output, /sent/);
    assert.deepEqual(
      off.sandbox.denials.map((d) => [d.operation, d.detail, d.rule]),
      [['network', 'socket(AF_INET)', 'network is off']],
    );
    assert.deepEqual(got, []);
    const on = await run({ command: `echo hi > /dev/tcp/127.0.0.1/${port} && echo sent`, sandbox: { network: true }, cwd: tempDir() });
    assert.match(on.output, /sent/);
    assert.deepEqual(on.sandbox.denials, []);
    await waitFor(() => got.join('') === 'hi\n', { what: 'the listener to receive' });
    // Unix sockets keep working with the network off.
    const unix = await run({
      command: `python3 -c "import socket; a, b = socket.socketpair(); a.send(b'ok'); print(b.recv(2).decode())"`,
      sandbox: true,
      cwd: tempDir(),
    });
    assert.match(unix.output, /^ok$/m);
  } finally {
    server.close();
  }
});

const connectWith = (target) =>
  `python3 -c "import socket; s = socket.socket(socket.AF_UNIX); s.connect('${target}'); s.send(b'hi'); print('connected')"`;

test('network off: Unix sockets outside the roots are refused and named; inside the roots, in unixSockets, or with the network on they connect', when(needs.sandbox), async () => {
  const cwd = tempDir();
  const elsewhere = tempDir();
  const outside = path.join(elsewhere, 'daemon.sock');
  const inside = path.join(cwd, 'dev.sock');
  const out = await listener(outside);
  const inn = await listener(inside);
  try {
    const refused = await run({ command: connectWith(outside), sandbox: true, cwd });
    assert.match(refused.output, /PermissionError/);
    assert.deepEqual(
      refused.sandbox.denials.map((d) => [d.operation, d.path, d.detail, d.rule]),
      [['connect', fs.realpathSync(outside), 'connect(AF_UNIX)', 'outside the writable roots and unixSockets']],
    );
    // A relative path is resolved against the caller's cwd, and a socket the run could make itself works.
    const ok = await run({ command: connectWith('dev.sock'), sandbox: true, cwd });
    assert.match(ok.output, /^connected$/m);
    assert.deepEqual(ok.sandbox.denials, []);
    const allowed = await run({ command: connectWith(outside), sandbox: { unixSockets: [elsewhere] }, cwd });
    assert.match(allowed.output, /^connected$/m);
    assert.deepEqual(allowed.sandbox.unixSockets, [fs.realpathSync(elsewhere)]);
    const on = await run({ command: connectWith(outside), sandbox: { network: true }, cwd });
    assert.match(on.output, /^connected$/m);
    await waitFor(() => out.got.join('') === 'hihi' && inn.got.join('') === 'hi', { what: 'the listeners to receive' });
    // Abstract names are refused with the network off; a missing socket is the kernel's ENOENT, unreported.
    const abstract = await run({ command: `python3 -c "import socket; socket.socket(socket.AF_UNIX).connect('\\0agent-exec-${process.pid}')"`, sandbox: true, cwd });
    assert.match(abstract.output, /PermissionError/);
    assert.deepEqual(abstract.sandbox.denials.map((d) => [d.operation, d.detail]), [['connect', `connect(AF_UNIX @agent-exec-${process.pid})`]]);
    const missing = await run({ command: connectWith(path.join(elsewhere, 'none.sock')), sandbox: true, cwd });
    assert.match(missing.output, /FileNotFoundError/);
    assert.deepEqual(missing.sandbox.denials, []);
  } finally {
    out.server.close();
    inn.server.close();
  }
});

test('connects waiting on a full listener are capped per run: the rest hear EAGAIN, and closing the listener frees them all', when(needs.sandbox), async () => {
  const cwd = tempDir();
  const script = `
import errno, socket, threading, time
srv = socket.socket(socket.AF_UNIX)
srv.bind('full.sock')
srv.listen(0)
results = []
def attempt():
    c = socket.socket(socket.AF_UNIX)
    try:
        c.connect('full.sock')
        results.append('ok')
    except OSError as e:
        results.append(errno.errorcode.get(e.errno, str(e.errno)))
threads = [threading.Thread(target=attempt, daemon=True) for _ in range(40)]
for t in threads:
    t.start()
deadline = time.time() + 10
while len(results) < 40 - 16 and time.time() < deadline:
    time.sleep(0.01)
print('EAGAIN', results.count('EAGAIN'), 'ok', results.count('ok'))
srv.close()
for t in threads:
    t.join(10)
print('finished', len(results))
`;
  fs.writeFileSync(path.join(cwd, 'full.py'), script);
  const r = await run({ command: 'python3 full.py', sandbox: true, cwd, timeoutMs: 60000 });
  const [, eagain, ok] = (/EAGAIN (\d+) ok (\d+)/.exec(r.output) || []).map(Number);
  // 40 attempts: the listener's backlog takes one or two, 16 wait in the supervisor, the rest are turned away.
  assert.ok(eagain >= 40 - 16 - 2, r.output);
  assert.ok(ok >= 1, r.output);
  assert.match(r.output, /^finished 40$/m);
});

test('a connect whose address changes under the check reaches only what was checked', when(needs.sandbox), async () => {
  const cwd = tempDir();
  const outside = path.join(tempDir(), 'o.sock');
  const inside = path.join(cwd, 'i.sock');
  let outsideConnections = 0;
  let insideConnections = 0;
  const out = net.createServer(() => outsideConnections++);
  const inn = net.createServer((s) => (insideConnections++, s.destroy()));
  await new Promise((res) => out.listen(outside, res));
  await new Promise((res) => inn.listen(inside, res));
  // One thread connects over and over while another flips the address between an allowed socket and a
  // refused one. A supervisor that let the kernel re-read the address would sometimes connect outside.
  const script = `
import ctypes, socket, struct, threading
libc = ctypes.CDLL(None, use_errno=True)
good, bad = ${JSON.stringify(inside)}.encode(), ${JSON.stringify(outside)}.encode()
n = max(len(good), len(bad)) + 1
addr = ctypes.create_string_buffer(2 + n)
struct.pack_into('H', addr, 0, socket.AF_UNIX)
ctypes.memmove(ctypes.addressof(addr) + 2, good.ljust(n, b'\\0'), n)
stop = []
def flip():
    while not stop:
        for p in (bad, good):
            ctypes.memmove(ctypes.addressof(addr) + 2, p.ljust(n, b'\\0'), n)
threading.Thread(target=flip, daemon=True).start()
made = 0
for _ in range(400):
    s = socket.socket(socket.AF_UNIX)
    made += libc.connect(s.fileno(), addr, 2 + n) == 0
    s.close()
stop.append(1)
print('connected', made)
`;
  fs.writeFileSync(path.join(cwd, 'race.py'), script);
  try {
    const r = await run({ command: 'python3 race.py', sandbox: true, cwd, timeoutMs: 60000 });
    const made = Number((/connected (\d+)/.exec(r.output) || [])[1]);
    assert.ok(made > 0, r.output);
    const refused = r.sandbox.denials.find((d) => d.detail === 'connect(AF_UNIX)');
    assert.ok(refused && refused.count > 0, JSON.stringify(r.sandbox.denials));
    assert.equal(refused.path, fs.realpathSync(outside), JSON.stringify(r.sandbox.denials));
    await waitFor(() => insideConnections === made, { what: `${made} connections inside (saw ${insideConnections})` });
    assert.equal(outsideConnections, 0);
  } finally {
    out.close();
    inn.close();
  }
});

/**
 * A Unix datagram socket bound at `file` by a process outside any sandbox. `received()` answers every
 * datagram that reached it so far: a Unix datagram is queued at the receiver during the send itself, so
 * once a run has ended, everything it sent is there.
 */
async function datagramReceiver(file) {
  const script = `
import json, select, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.setblocking(False)
got = []
def drain():
    while True:
        try:
            got.append(s.recv(65536).decode())
        except BlockingIOError:
            return
print('ready', flush=True)
while True:
    ready, _, _ = select.select([s, sys.stdin], [], [])
    if s in ready:
        drain()
    if sys.stdin in ready:
        if not sys.stdin.readline():
            break
        drain()
        print(json.dumps(got), flush=True)
`;
  const child = spawn('python3', ['-c', script, file], { stdio: ['pipe', 'pipe', 'inherit'] });
  track(child.pid);
  const lines = [];
  let partial = '';
  child.stdout.on('data', (d) => {
    const parts = (partial + d).split('\n');
    partial = parts.pop();
    lines.push(...parts);
  });
  await waitFor(() => lines.length > 0, { what: `a receiver bound at ${file}` });
  lines.shift();
  return {
    async received() {
      child.stdin.write('\n');
      await waitFor(() => lines.length > 0, { what: `the receiver at ${file} to answer` });
      return JSON.parse(lines.shift());
    },
    async close() {
      child.kill('SIGKILL');
      await waitFor(() => !alive(child.pid), { what: `the receiver at ${file} to end` });
    },
  };
}

/** A sandboxed sender: `python3 dg.py HOW TARGET PAYLOAD` prints "HOW sent" or "HOW failed ERRNO". */
const DATAGRAM_SENDER = `
import ctypes, socket, struct, sys
how, target, payload = sys.argv[1], sys.argv[2], sys.argv[3].encode()
libc = ctypes.CDLL(None, use_errno=True)
class iovec(ctypes.Structure):
    _fields_ = [('base', ctypes.c_void_p), ('len', ctypes.c_size_t)]
class msghdr(ctypes.Structure):
    _fields_ = [('name', ctypes.c_void_p), ('namelen', ctypes.c_uint32), ('iov', ctypes.POINTER(iovec)),
                ('iovlen', ctypes.c_size_t), ('control', ctypes.c_void_p), ('controllen', ctypes.c_size_t), ('flags', ctypes.c_int)]
class mmsghdr(ctypes.Structure):
    _fields_ = [('hdr', msghdr), ('len', ctypes.c_uint)]
def check(rc):
    if rc < 0:
        raise OSError(ctypes.get_errno(), how)
    return rc
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
try:
    if how == 'sendto':
        s.sendto(payload, target)
    elif how == 'sendmsg':
        s.sendmsg([payload], [], 0, target)
    elif how == 'abstract':
        s.sendto(payload, '\\0' + target)
    elif how == 'connected':
        s.connect(target)
        s.send(payload)
    elif how == 'inet':
        sin = struct.pack('HH4s8x', socket.AF_INET, socket.htons(9), socket.inet_aton('127.0.0.1'))
        check(libc.sendto(s.fileno(), payload, len(payload), 0, sin, len(sin)))
    elif how == 'inet-connect':
        sin = struct.pack('HH4s8x', socket.AF_INET, socket.htons(9), socket.inet_aton('127.0.0.1'))
        check(libc.connect(s.fileno(), sin, len(sin)))
    elif how == 'sendmmsg':
        addr = ctypes.create_string_buffer(struct.pack('H', socket.AF_UNIX) + target.encode() + b'\\0')
        bufs = [ctypes.create_string_buffer(payload + str(i).encode(), len(payload) + 1) for i in range(2)]
        iovs = (iovec * 2)(*[iovec(ctypes.addressof(b), len(payload) + 1) for b in bufs])
        msgs = (mmsghdr * 2)()
        for i in range(2):
            msgs[i].hdr.name, msgs[i].hdr.namelen = ctypes.addressof(addr), len(addr)
            msgs[i].hdr.iov, msgs[i].hdr.iovlen = ctypes.pointer(iovs[i]), 1
        n = check(libc.sendmmsg(s.fileno(), msgs, 2, 0))
        assert n == 2 and [m.len for m in msgs] == [len(payload) + 1] * 2, (n, [m.len for m in msgs])
    print(how, 'sent')
except OSError as e:
    print(how, 'failed', e.errno)
`;

test('network off: datagrams to Unix sockets outside the roots are refused and named (sendto, sendmsg, sendmmsg); inside the roots, in unixSockets, or with the network on they arrive', when(needs.sandbox), async () => {
  const cwd = tempDir();
  const elsewhere = tempDir();
  fs.writeFileSync(path.join(cwd, 'dg.py'), DATAGRAM_SENDER);
  const outsidePath = path.join(elsewhere, 'log.sock');
  const insidePath = path.join(cwd, 'in.sock');
  const out = await datagramReceiver(outsidePath);
  const inn = await datagramReceiver(insidePath);
  const sends = (target, ...hows) => hows.map((how) => `python3 dg.py ${how} ${target} ${how}`).join('; ');
  try {
    const refused = await run({ command: sends(outsidePath, 'sendto', 'sendmsg', 'sendmmsg', 'connected'), sandbox: true, cwd });
    assert.equal(refused.output, 'sendto failed 13\nsendmsg failed 13\nsendmmsg failed 13\nconnected failed 13\n');
    const real = fs.realpathSync(outsidePath);
    const rule = 'outside the writable roots and unixSockets';
    assert.deepEqual(
      refused.sandbox.denials.map((d) => [d.operation, d.path, d.detail, d.rule]),
      [
        ['send', real, 'sendto(AF_UNIX)', rule],
        ['send', real, 'sendmsg(AF_UNIX)', rule],
        ['send', real, 'sendmmsg(AF_UNIX)', rule],
        ['connect', real, 'connect(AF_UNIX)', rule],
      ],
    );
    assert.deepEqual(await out.received(), []);
    // Inside the roots (a relative path resolves against the caller's cwd), and on a connected socket.
    const ok = await run({ command: sends('in.sock', 'sendto', 'sendmsg', 'sendmmsg', 'connected'), sandbox: true, cwd });
    assert.equal(ok.output, 'sendto sent\nsendmsg sent\nsendmmsg sent\nconnected sent\n');
    assert.deepEqual(ok.sandbox.denials, []);
    assert.deepEqual(await inn.received(), ['sendto', 'sendmsg', 'sendmmsg0', 'sendmmsg1', 'connected']);
    // Named in unixSockets, or with the network on: they arrive.
    const allowed = await run({ command: sends(outsidePath, 'sendto', 'sendmsg'), sandbox: { unixSockets: [elsewhere] }, cwd });
    assert.equal(allowed.output, 'sendto sent\nsendmsg sent\n');
    const on = await run({ command: sends(outsidePath, 'sendmmsg'), sandbox: { network: true }, cwd });
    assert.equal(on.output, 'sendmmsg sent\n');
    assert.deepEqual(await out.received(), ['sendto', 'sendmsg', 'sendmmsg0', 'sendmmsg1']);
    // Abstract names and other families are the network, off.
    const other = await run({ command: `${sends(`agent-exec-${process.pid}`, 'abstract')}; ${sends('-', 'inet', 'inet-connect')}`, sandbox: true, cwd });
    assert.equal(other.output, 'abstract failed 1\ninet failed 13\ninet-connect failed 13\n');
    assert.deepEqual(
      other.sandbox.denials.map((d) => [d.operation, d.detail, d.rule]),
      [
        ['send', `sendto(AF_UNIX @agent-exec-${process.pid})`, 'network is off (abstract Unix sockets included)'],
        ['network', 'sendto(AF_INET)', 'network is off'],
        ['network', 'connect(AF_INET)', 'network is off'],
      ],
    );
  } finally {
    await out.close();
    await inn.close();
  }
});

test('a datagram whose address changes under the check reaches only what was checked (sendto, and sendmsg on a connected socket)', when(needs.sandbox), async () => {
  const cwd = tempDir();
  const outsidePath = path.join(tempDir(), 'o.sock');
  const insidePath = path.join(cwd, 'i.sock');
  const out = await datagramReceiver(outsidePath);
  const inn = await datagramReceiver(insidePath);
  // One thread sends over and over while another flips the address: sendto's between the allowed
  // socket and a refused one; sendmsg's header between no address (the connected, allowed peer) and
  // the refused one. A supervisor that let the kernel re-read either would sometimes send outside.
  const script = `
import ctypes, errno, socket, struct, threading
libc = ctypes.CDLL(None, use_errno=True)
good, bad = ${JSON.stringify(insidePath)}.encode(), ${JSON.stringify(outsidePath)}.encode()
n = max(len(good), len(bad)) + 1
addr = ctypes.create_string_buffer(2 + n)
struct.pack_into('H', addr, 0, socket.AF_UNIX)
def put(p):
    ctypes.memmove(ctypes.addressof(addr) + 2, p.ljust(n, b'\\0'), n)
put(good)
bad_addr = ctypes.create_string_buffer(struct.pack('H', socket.AF_UNIX) + bad + b'\\0')
class iovec(ctypes.Structure):
    _fields_ = [('base', ctypes.c_void_p), ('len', ctypes.c_size_t)]
class msghdr(ctypes.Structure):
    _fields_ = [('name', ctypes.c_void_p), ('namelen', ctypes.c_uint32), ('iov', ctypes.POINTER(iovec)),
                ('iovlen', ctypes.c_size_t), ('control', ctypes.c_void_p), ('controllen', ctypes.c_size_t), ('flags', ctypes.c_int)]
payload = ctypes.create_string_buffer(b'm', 1)
iov = iovec(ctypes.addressof(payload), 1)
hdr = msghdr()
hdr.iov, hdr.iovlen = ctypes.pointer(iov), 1
stop = []
def flip():
    while not stop:
        put(bad)
        hdr.name, hdr.namelen = ctypes.addressof(bad_addr), len(bad_addr)
        put(good)
        hdr.name, hdr.namelen = None, 0
threading.Thread(target=flip, daemon=True).start()
def attempts(send):
    # Until the flip has been seen both ways (the threads' turns are up to the scheduler), within a bound.
    sent = refused = 0
    for _ in range(20000):
        if send() == 1:
            sent += 1
        elif ctypes.get_errno() == errno.EACCES:
            refused += 1
        if sent >= 20 and refused >= 20:
            break
    return sent
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
to = attempts(lambda: libc.sendto(s.fileno(), b'r', 1, 0, addr, 2 + n))
c = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
c.connect(good)
msg = attempts(lambda: libc.sendmsg(c.fileno(), ctypes.byref(hdr), 0))
stop.append(1)
print('sent', to, msg)
`;
  fs.writeFileSync(path.join(cwd, 'race.py'), script);
  try {
    const r = await run({ command: 'python3 race.py', sandbox: true, cwd, timeoutMs: 60000 });
    const [, to, msg] = (/sent (\d+) (\d+)/.exec(r.output) || []).map(Number);
    assert.ok(to > 0 && msg > 0, r.output);
    const real = fs.realpathSync(outsidePath);
    for (const call of ['sendto', 'sendmsg']) {
      const refused = r.sandbox.denials.find((d) => d.detail === `${call}(AF_UNIX)`);
      assert.ok(refused && refused.count > 0, JSON.stringify(r.sandbox.denials));
      assert.equal(refused.path, real);
    }
    assert.deepEqual(await out.received(), []);
    const got = await inn.received();
    assert.equal(got.filter((x) => x === 'r').length, to);
    assert.equal(got.filter((x) => x === 'm').length, msg);
  } finally {
    await out.close();
    await inn.close();
  }
});

test('a private /dev/shm per run: POSIX semaphores work, the host\'s shared memory is out of reach', when(needs.sandbox, !(caps.readOnlyBinds && process.getuid() === 0) && 'a private /dev/shm is made for root runs with a mount namespace', !fs.existsSync('/dev/shm') && 'this host has no /dev/shm'), async () => {
  const hostFile = `/dev/shm/agent-exec-host-${process.pid}`;
  fs.writeFileSync(hostFile, 'host\n');
  try {
    const cwd = tempDir();
    const r = await run({
      command: [
        `python3 -c "import multiprocessing as m; l = m.Lock(); q = m.Queue(); q.put(42); print('queue', q.get())"`,
        'echo run > /dev/shm/probe && ls /dev/shm',
        `echo mine > ${hostFile} && cat ${hostFile}`,
        `echo escape > /proc/1/root${hostFile} || echo escape-refused`,
      ].join('; '),
      sandbox: true,
      cwd,
    });
    assert.match(r.output, /^queue 42$/m);
    assert.match(r.output, /^probe$/m);
    assert.match(r.output, /^mine$/m);
    assert.match(r.output, /^escape-refused$/m);
    assert.ok(r.sandbox.mechanisms.includes('private /dev/shm (mount namespace)'), r.sandbox.mechanisms.join());
    assert.equal(fs.readFileSync(hostFile, 'utf8'), 'host\n');
    assert.equal(fs.existsSync('/dev/shm/probe'), false);
    // Each run has its own.
    const next = await run({ command: 'ls -A /dev/shm | wc -l', sandbox: true, cwd });
    assert.equal(next.output.trim(), '0');
    // A run whose cwd is in the host's /dev/shm keeps it (covering it would hide the run's own files).
    const inShm = fs.mkdtempSync('/dev/shm/agent-exec-test-');
    try {
      const there = await run({ command: 'echo here > f && cat f', sandbox: true, cwd: inShm });
      assert.equal(there.output, 'here\n');
      assert.ok(!there.sandbox.mechanisms.includes('private /dev/shm (mount namespace)'), there.sandbox.mechanisms.join());
    } finally {
      fs.rmSync(inShm, { recursive: true, force: true });
    }
  } finally {
    fs.rmSync(hostFile, { force: true });
  }
});

test('as root, mounts outside the roots are read-only: a chmod whose path changes under the check still cannot land outside', when(needs.sandbox, process.getuid() !== 0 && 'needs root: the race it checks is root\'s (a normal user cannot chmod files it does not own)', !caps.readOnlyMounts && 'mounts cannot be made read-only here'), async () => {
  const cwd = tempDir();
  const inside = path.join(cwd, 'inside.txt');
  const outsideFile = path.join(tempDir(), 'outside.txt');
  fs.writeFileSync(inside, 'in');
  fs.writeFileSync(outsideFile, 'out');
  fs.chmodSync(outsideFile, 0o644);
  // One thread calls chmod over and over while another flips the path between an allowed file and a
  // refused one: the supervisor's check alone can be raced, the read-only mount cannot.
  const script = `
import ctypes, threading
libc = ctypes.CDLL(None, use_errno=True)
good, bad = ${JSON.stringify(inside)}.encode(), ${JSON.stringify(outsideFile)}.encode()
n = max(len(good), len(bad)) + 1
buf = ctypes.create_string_buffer(good.ljust(n, b'\\0'), n)
stop = []
def flip():
    while not stop:
        for p in (bad, good):
            ctypes.memmove(buf, p.ljust(n, b'\\0'), n)
threading.Thread(target=flip, daemon=True).start()
done = sum(libc.chmod(buf, 0o600) == 0 for _ in range(3000))
stop.append(1)
print('changed', done)
`;
  fs.writeFileSync(path.join(cwd, 'race.py'), script);
  const r = await run({ command: 'python3 race.py', sandbox: true, cwd, timeoutMs: 60000 });
  assert.ok(r.sandbox.mechanisms.includes('read-only mounts outside the roots (mount namespace)'), r.sandbox.mechanisms.join());
  const changed = Number((/changed (\d+)/.exec(r.output) || [])[1]);
  assert.ok(changed > 0, r.output);
  assert.equal(fs.statSync(inside).mode & 0o777, 0o600);
  assert.equal(fs.statSync(outsideFile).mode & 0o777, 0o644);
  assert.ok(r.sandbox.denials.some((d) => d.operation === 'chmod' && d.path === fs.realpathSync(outsideFile)), JSON.stringify(r.sandbox.denials));
});

test('the same rules hold over a PTY', when(needs.sandbox), async () => {
  const dir = tempDir();
  const target = outside();
  const { server, got, port } = await listener();
  try {
    const r = await run({
      command: `tty; echo in > pty.txt; echo out > ${target}; echo hi > /dev/tcp/127.0.0.1/${port}; echo end`,
      cwd: dir,
      pty: true,
      sandbox: true,
    });
    assert.match(r.output, /^\/dev\/pts\/\d+$/m);
    assert.ok(fs.existsSync(path.join(dir, 'pty.txt')));
    assert.equal(fs.existsSync(target), false);
    assert.match(r.output, /end/);
    const ops = r.sandbox.denials.map((d) => `${d.operation} ${d.path ?? d.detail}`);
    assert.ok(ops.includes(`write ${target}`), ops.join());
    assert.ok(ops.includes('network socket(AF_INET)'), ops.join());
    assert.deepEqual(got, []);
    const cpu = await run({ command: 'while :; do :; done', cwd: dir, pty: true, sandbox: { limits: { cpuSeconds: 1 } }, timeoutMs: 30000 });
    assert.equal(cpu.sandbox.limitExceeded, 'cpu');
    assert.equal(cpu.reason, 'Command stopped by the sandbox: the CPU limit (1 s per process) was reached');
  } finally {
    server.close();
  }
});

test('over a PTY, the memory limit of a cgroup ends a run and is named', when(needs.sandbox, needs.cgroupMemory), async () => {
  const mem = await run({
    command: `python3 -c "x = b'\\x01' * (512 << 20)"`,
    cwd: tempDir(),
    pty: true,
    sandbox: { limits: { memoryBytes: 64 * 1024 * 1024 } },
    timeoutMs: 30000,
  });
  assert.equal(mem.sandbox.limitExceeded, 'memory', JSON.stringify(mem.sandbox));
});

test('a fork bomb stops at the process limit, which is named', { ...when(needs.sandbox, needs.cgroupPids), timeout: 60000 }, async () => {
  const r = await run({
    command: 'bomb() { bomb | bomb & }; bomb; sleep 30',
    cwd: tempDir(),
    sandbox: { limits: { processes: 40 } },
    timeoutMs: 4000,
    killGraceMs: 200,
  });
  assert.equal(r.timedOut, true);
  assert.equal(r.sandbox.limitExceeded, 'processes');
  assert.match(r.sandbox.limitMessage, /^the process limit \(40\) refused \d+ forks?$/);
  assert.ok(r.warnings.some((w) => w.startsWith('Warning: sandbox: the process limit (40) refused')), r.warnings.join('\n'));
  assert.ok(r.sandbox.mechanisms.some((m) => /^cgroup v[12] \(pids\)$/.test(m)), r.sandbox.mechanisms.join());
  assert.deepEqual(r.survivors, []);
  await assertNothingLeft(r);
});

test('the memory limit ends a run and is named', { ...when(needs.sandbox, needs.cgroupMemory), timeout: 60000 }, async () => {
  const r = await run({
    command: `python3 -c "x = b'\\x01' * (512 << 20); print(len(x))"`,
    cwd: tempDir(),
    sandbox: { limits: { memoryBytes: 64 * 1024 * 1024 } },
    timeoutMs: 30000,
  });
  assert.equal(r.status, 'failed');
  assert.equal(r.sandbox.limitExceeded, 'memory');
  assert.equal(r.reason, 'Command stopped by the sandbox: the memory limit (64 MiB) was reached: the kernel killed 1 process');
  assert.doesNotMatch(r.output, /536870912/);
});

test('without a memory cgroup the memory limit holds per process through RLIMIT_DATA, and Node still starts under it', { ...when(needs.sandbox, !String(caps.limits.memoryBytes).startsWith('rlimit') && `memory is limited by ${caps.limits.memoryBytes} here (the cgroup test covers it)`), timeout: 60000 }, async () => {
  assert.equal(caps.limits.memoryBytes, 'rlimit-data');
  const limits = { memoryBytes: 256 * 1024 * 1024 };
  const r = await run({ command: `python3 -c "x = b'\\x01' * (512 << 20); print(len(x))"`, cwd: tempDir(), sandbox: { limits }, timeoutMs: 30000 });
  assert.ok(r.sandbox.mechanisms.some((m) => /^rlimits \(.*\bdata\b/.test(m)), r.sandbox.mechanisms.join());
  // The allocation was refused: the program saw it fail.
  assert.doesNotMatch(r.output, /536870912/);
  assert.match(r.output, /MemoryError/);
  assert.notEqual(r.exitCode, 0);
  // A runtime that reserves gigabytes of address space at start (V8) runs under the same limit...
  const node = await run({ command: `${JSON.stringify(process.execPath)} -e "console.log('node-ran', Buffer.alloc(16 << 20).length)"`, cwd: tempDir(), sandbox: { limits }, timeoutMs: 30000 });
  assert.equal(node.exitCode, 0, node.output);
  assert.match(node.output, /node-ran 16777216/);
  assert.equal(node.sandbox.limitExceeded, undefined);
  // ...and when it outgrows the limit, the run is named as stopped by it, whatever signal ended it.
  const big = await run({
    command: `${JSON.stringify(process.execPath)} -e "const a = []; for (;;) a.push(new Array(1e6).fill(1.5))"`,
    cwd: tempDir(),
    sandbox: { limits },
    timeoutMs: 30000,
  });
  assert.equal(big.status, 'failed', big.output);
  assert.equal(big.sandbox.limitExceeded, 'memory', `${big.exitCode} ${big.exitSignal} ${big.output.slice(-300)}`);
  assert.match(big.reason, /^Command stopped by the sandbox: the memory limit \(256 MiB, per process\) was likely reached: the run ended by SIG[A-Z]+/);
});

test('the CPU limit ends a run and is named', { ...when(needs.sandbox), timeout: 60000 }, async () => {
  const r = await run({ command: 'while :; do :; done', cwd: tempDir(), sandbox: { limits: { cpuSeconds: 1 } }, timeoutMs: 30000 });
  assert.equal(r.status, 'failed');
  assert.equal(r.exitSignal, 'SIGXCPU');
  assert.equal(r.sandbox.limitExceeded, 'cpu');
  assert.equal(r.reason, 'Command stopped by the sandbox: the CPU limit (1 s per process) was reached');
  // A child killed by the limit is seen through its shell's exit status (128 + SIGXCPU).
  const child = await run({ command: 'python3 -c "while True: pass"; exit $?', cwd: tempDir(), sandbox: { limits: { cpuSeconds: 1 } }, timeoutMs: 30000 });
  assert.equal(child.exitCode, 152);
  assert.equal(child.sandbox.limitExceeded, 'cpu');
  assert.equal(child.status, 'failed');
});

test('file size and open file limits apply', when(needs.sandbox), async () => {
  const r = await run({
    command: 'head -c 100000 /dev/zero > big.bin',
    cwd: tempDir(),
    sandbox: { limits: { fileSizeBytes: 4096 } },
  });
  assert.equal(r.sandbox.limitExceeded, 'fileSize');
  assert.equal(r.status, 'failed');
  assert.equal(r.reason, 'Command stopped by the sandbox: the file size limit (4 KiB) was reached');
  const n = await run({ command: 'ulimit -n', cwd: tempDir(), sandbox: { limits: { openFiles: 64 } } });
  assert.equal(n.output.trim(), '64');
});

test('a backgrounded sandboxed session keeps its sandbox and reports when polled', when(needs.sandbox), async () => {
  const dir = tempDir();
  const target = outside();
  const r = await native.exec({ command: `sleep 0.3; echo out > ${target}; echo done`, cwd: dir, sandbox: true, background: true });
  track(r.pid);
  let p;
  await waitFor(async () => (p = await native.pollSession(r.sessionId, { timeoutMs: 1000 })).exited, { what: 'the session to end' });
  assert.equal(fs.existsSync(target), false);
  assert.equal(p.sandbox.denials[0].path, target);
  native.clearSession(r.sessionId);
});

test('bad sandbox options are typed errors', async () => {
  const cases = [
    [{ sandbox: 'yes' }, 'ERR_INVALID_OPTION', /sandbox option must be true, false or an object/],
    [{ sandbox: { writeableRoots: [] } }, 'ERR_INVALID_OPTION', /no setting "writeableRoots"/],
    [{ sandbox: { writableRoots: 'dir' } }, 'ERR_INVALID_OPTION', /array of directory paths/],
    [{ sandbox: { writableRoots: ['/no/such/dir'] } }, 'ERR_INVALID_OPTION', /\/no\/such\/dir does not exist/],
    [{ sandbox: { writableRoots: ['/etc/hostname'] } }, 'ERR_INVALID_OPTION', /is not a directory/],
    [{ sandbox: { network: 'on' } }, 'ERR_INVALID_OPTION', /sandbox\.network must be true, false, or \{ allow/],
    [{ sandbox: { limits: { memory: 1 } } }, 'ERR_INVALID_OPTION', /no setting "memory"/],
    [{ sandbox: { limits: { memoryBytes: 1000 } } }, 'ERR_INVALID_OPTION', /memoryBytes must be a whole number of at least 4194304/],
    [{ sandbox: { limits: { processes: 1.5 } } }, 'ERR_INVALID_OPTION', /whole number/],
    [{ sandbox: { limits: { cpuSeconds: -1 } } }, 'ERR_INVALID_OPTION', /at least 0/],
    [{ sandbox: { limits: 5 } }, 'ERR_INVALID_OPTION', /limits must be an object/],
    [{ sandbox: { unixSockets: '/run/x.sock' } }, 'ERR_INVALID_OPTION', /unixSockets must be an array of absolute paths/],
    [{ sandbox: { unixSockets: ['x.sock'] } }, 'ERR_INVALID_OPTION', /unixSockets: x\.sock is not an absolute path/],
    [{ sandbox: { unixSockets: ['/run/\0x'] } }, 'ERR_INVALID_OPTION', /unixSockets has an empty path or one with a NUL byte/],
  ];
  for (const [opts, code, message] of cases) {
    await assert.rejects(native.exec({ command: 'true', ...opts }), (e) => {
      assert.equal(e.code, code, JSON.stringify(opts));
      assert.match(e.message, message);
      return true;
    });
  }
});

test('a sandbox inside a sandbox is refused with ERR_SANDBOX_UNAVAILABLE, and nothing runs', when(needs.sandbox), async () => {
  const dir = tempDir();
  const script = path.join(dir, 'nested.js');
  fs.writeFileSync(
    script,
    `const a = require(${JSON.stringify(path.join(__dirname, '..', 'js', 'index.js'))});
     const caps = a.sandboxCapabilities();
     console.log('enforceable=' + caps.enforceable);
     a.exec({ command: 'touch ran', sandbox: true }).then(() => console.log('ran'), (e) => console.log(e.code + ': ' + e.message));`,
  );
  const r = await run({ command: `${JSON.stringify(process.execPath)} ${script}`, cwd: dir, sandbox: true });
  assert.match(r.output, /enforceable=false/);
  assert.match(r.output, /ERR_SANDBOX_UNAVAILABLE: This host cannot enforce the requested sandbox: this process already runs inside a sandbox/);
  assert.match(r.output, /Nothing was run/);
  assert.equal(fs.existsSync(path.join(dir, 'ran')), false);
});

test('root without CAP_SYS_ADMIN (a container\'s root): no mount namespace is claimed, and sandboxed runs still work', when(needs.sandbox, process.getuid() !== 0 && 'needs root to drop a capability', noSetpriv || (spawnSync('setpriv', ['--bounding-set=-sys_admin', 'true']).status !== 0 && 'this root cannot drop a capability (no CAP_SETPCAP)')), async () => {
  const dir = tempDir();
  fs.mkdirSync(path.join(dir, '.git/hooks'), { recursive: true });
  const target = outside();
  const script = path.join(dir, 'nocap.js');
  fs.writeFileSync(
    script,
    `const a = require(${JSON.stringify(path.join(__dirname, '..', 'js', 'index.js'))});
     a.exec({ command: 'echo in > in.txt; echo out > ${target}; echo hook > .git/hooks/pre-commit; ls /dev/shm >/dev/null && echo shm-readable', cwd: ${JSON.stringify(dir)}, sandbox: true })
       .then((r) => console.log(JSON.stringify({ binds: a.sandboxCapabilities().readOnlyBinds, mounts: a.sandboxCapabilities().readOnlyMounts, mech: r.sandbox.mechanisms, denials: r.sandbox.denials.map((d) => d.path), out: r.output })),
             (e) => console.log(JSON.stringify({ error: e.code, message: e.message })));`,
  );
  // Out of the bounding set, CAP_SYS_ADMIN is gone for root's programs: no mount namespace can be made.
  const r = await run({ command: `setpriv --bounding-set=-sys_admin --inh-caps=-sys_admin ${JSON.stringify(process.execPath)} ${script}`, cwd: dir, timeoutMs: 30000 });
  const got = JSON.parse(r.output.trim().split('\n').pop());
  assert.equal(got.error, undefined, got.message);
  assert.equal(got.binds, false);
  assert.equal(got.mounts, false);
  assert.ok(got.mech.includes('protected paths guarded by the supervisor only'), got.mech.join());
  assert.ok(!got.mech.includes('private /dev/shm (mount namespace)'), got.mech.join());
  assert.deepEqual(got.denials, [target, path.join(fs.realpathSync(dir), '.git/hooks/pre-commit')]);
  assert.match(got.out, /shm-readable/);
  assert.equal(fs.readFileSync(path.join(dir, 'in.txt'), 'utf8'), 'in\n');
  assert.equal(fs.existsSync(path.join(dir, '.git/hooks/pre-commit')), false);
});

/** Run as a normal user: this one when it is not root, else `nobody` through setpriv. */
const asNormalUser = process.getuid() === 0 ? 'setpriv --reuid=65534 --regid=65534 --clear-groups ' : '';
const normalUserSkip = process.getuid() === 0 ? noSetpriv : false;

test('as an unprivileged user the process limit comes from a user namespace', when(needs.sandbox, !caps.userNamespaces && 'no user namespaces here', normalUserSkip, process.getuid() !== 0 && caps.limits.processes !== 'rlimit-userns' && 'this user has a writable pids cgroup (the cgroup limit tests cover it)'), async () => {
  // A real non-root caller (nobody when the suite runs as root), where cgroups are not writable, so the
  // limit is RLIMIT_NPROC counted inside a user namespace of the run's own.
  const dir = tempDir('agent-exec-nobody-');
  fs.chmodSync(dir, 0o777);
  const forker = [
    'import os, signal, time',
    'kids = []',
    'try:',
    '    while True:',
    '        pid = os.fork()',
    '        if pid == 0:',
    '            time.sleep(30)',
    '            os._exit(0)',
    '        kids.append(pid)',
    'except OSError as e:',
    '    print("refused after", len(kids), "errno", e.errno)',
    'for k in kids:',
    '    os.kill(k, signal.SIGKILL)',
  ].join('\n');
  fs.writeFileSync(path.join(dir, 'forker.py'), forker);
  const script = path.join(dir, 'limits.js');
  fs.writeFileSync(
    script,
    `const a = require(${JSON.stringify(worldReadableEntry())});
     a.exec({ command: 'python3 forker.py', cwd: ${JSON.stringify(dir)}, sandbox: { limits: { processes: 8 } }, timeoutMs: 20000 })
       .then((r) => console.log(JSON.stringify({ caps: a.sandboxCapabilities().limits.processes, mounts: a.sandboxCapabilities().readOnlyMounts, mech: r.sandbox.mechanisms, out: r.output })),
             (e) => console.log(JSON.stringify({ error: e.code, message: e.message })));`,
  );
  const r = await run({ command: `${asNormalUser}${JSON.stringify(process.execPath)} ${script}`, cwd: dir, timeoutMs: 30000 });
  const got = JSON.parse(r.output.trim().split('\n').pop());
  assert.equal(got.error, undefined, got.message);
  assert.equal(got.caps, 'rlimit-userns');
  assert.ok(got.mech.includes('rlimits (nproc)'), got.mech.join());
  assert.ok(got.mech.includes('user namespace (counts the run\'s processes)'), got.mech.join());
  // Its mount namespace also makes everything outside the roots read-only, where the kernel allows it.
  assert.equal(got.mech.includes('read-only mounts outside the roots (mount namespace)'), got.mounts, got.mech.join());
  const m = /refused after (\d+) errno 11/.exec(got.out);
  assert.ok(m, got.out);
  assert.ok(Number(m[1]) < 8 && Number(m[1]) > 0, got.out);
});

/**
 * What a hostile command tries once inside, written as JSON: its capability sets and securebits, and the
 * errno (0: it worked) of each attempt to reach past the sandbox.
 */
const ATTACKS = `
import ctypes, json, os, platform, subprocess, threading
libc = ctypes.CDLL(None, use_errno=True)
nr = {'x86_64': {'add_key': 248, 'keyctl': 250, 'clone': 56}, 'aarch64': {'add_key': 217, 'keyctl': 219, 'clone': 220}}[platform.machine()]
out = {}
def attempt(name, rc):
    out[name] = 0 if rc >= 0 else ctypes.get_errno()
out['caps'] = {l.split(':')[0]: l.split()[1] for l in open('/proc/self/status') if l.startswith('Cap')}
out['securebits'] = libc.prctl(27, 0, 0, 0, 0)  # PR_GET_SECUREBITS
try:
    os.mknod('null', 0o20666, os.makedev(1, 3))
    out['mknod'] = 0
except OSError as e:
    out['mknod'] = e.errno
attempt('sethostname', libc.sethostname(b'agent-exec-evil', 15))
attempt('setdomainname', libc.setdomainname(b'agent-exec-evil', 15))
attempt('unshare', libc.unshare(0x00020000))  # CLONE_NEWNS
attempt('unshare-user', libc.unshare(0x10000000))  # CLONE_NEWUSER
attempt('clone', libc.syscall(nr['clone'], 0x04000000 | 17, 0, 0, 0, 0))  # CLONE_NEWUTS | SIGCHLD
os.mkdir('mnt')
attempt('mount', libc.mount(b'none', b'mnt', b'tmpfs', 0, None))
attempt('add_key', libc.syscall(nr['add_key'], b'user', ('agent-exec-key-' + os.environ['KEY']).encode(), b'secret', 6, -3))
attempt('keyctl', libc.syscall(nr['keyctl'], 0, -3, 0))  # KEYCTL_GET_KEYRING_ID of the session keyring
t = threading.Thread(target=lambda: None)
t.start()
t.join()
out['thread'] = 'ok'
out['bash'] = subprocess.run(['bash', '-c', 'unshare -m true 2>/dev/null; echo $((6 * 7))'], capture_output=True, text=True).stdout.strip()
print(json.dumps(out))
`;

/** The run of ATTACKS as the outside world sees it: the host's hostname, domain name, keys, mounts. */
async function attackFromInside(runAs, { boundingSet }) {
  const hostname = os.hostname();
  const domainname = fs.readFileSync('/proc/sys/kernel/domainname', 'utf8');
  const key = `${process.pid}-${Date.now()}`;
  try {
    const r = await runAs(key);
    assert.equal(os.hostname(), hostname);
    assert.equal(fs.readFileSync('/proc/sys/kernel/domainname', 'utf8'), domainname);
    assert.doesNotMatch(fs.readFileSync('/proc/keys', 'utf8'), new RegExp(`agent-exec-key-${key}`));
    assert.doesNotMatch(fs.readFileSync('/proc/self/mountinfo', 'utf8'), / \/\S*\/mnt .* - tmpfs none /);
    const got = JSON.parse(r.output.trim().split('\n').pop());
    for (const [set, value] of Object.entries(got.caps)) {
      // Emptying the bounding set takes CAP_SETPCAP, which a normal user lacks; with no_new_privs and
      // nothing permitted it can grant nothing anyway.
      if (set !== 'CapBnd' || boundingSet) assert.equal(Number(`0x${value}`), 0, `${set} ${value}`);
    }
    const EPERM = 1;
    for (const call of ['mknod', 'sethostname', 'setdomainname', 'unshare', 'unshare-user', 'clone', 'mount', 'add_key', 'keyctl']) {
      assert.equal(got[call], EPERM, `${call}: ${JSON.stringify(got)}`);
    }
    assert.equal(got.thread, 'ok');
    assert.equal(got.bash, '42');
    const refused = new Map(r.denials.filter((d) => d.operation === 'syscall').map((d) => [d.detail, d.rule]));
    const want = {
      'mknodat(S_IFCHR)': 'no device files in the sandbox',
      sethostname: 'no hostname changes in the sandbox',
      setdomainname: 'no hostname changes in the sandbox',
      'unshare(CLONE_NEWNS)': 'no new namespaces in the sandbox',
      'unshare(CLONE_NEWUSER)': 'no new namespaces in the sandbox',
      'clone(CLONE_NEWUTS)': 'no new namespaces in the sandbox',
      mount: 'no mounts in the sandbox',
      add_key: 'no kernel keyrings in the sandbox',
      keyctl: 'no kernel keyrings in the sandbox',
    };
    for (const [detail, rule] of Object.entries(want)) assert.equal(refused.get(detail), rule, `${detail} in ${JSON.stringify(r.denials)}`);
    return got;
  } finally {
    // Should a change have got through, the host gets its names back.
    if (os.hostname() !== hostname) spawnSync('hostname', [hostname]);
    if (fs.readFileSync('/proc/sys/kernel/domainname', 'utf8') !== domainname) fs.writeFileSync('/proc/sys/kernel/domainname', domainname.trim());
  }
}

test('no powers inside, as root: no capability, securebits locked; device nodes, hostname, namespaces, mounts and keyrings are refused and recorded, and the host is unchanged', when(needs.sandbox, process.getuid() !== 0 && 'a root caller is what this test is about'), async () => {
  const cwd = tempDir();
  fs.writeFileSync(path.join(cwd, 'attacks.py'), ATTACKS);
  let mechanisms;
  const got = await attackFromInside(async (key) => {
    const r = await run({ command: 'python3 attacks.py', cwd, env: { KEY: key }, sandbox: true });
    mechanisms = r.sandbox.mechanisms;
    return { output: r.output, denials: r.sandbox.denials };
  }, { boundingSet: true });
  assert.ok(mechanisms.includes('no capabilities (all sets empty, securebits locked)'), mechanisms.join());
  // SECBIT_NOROOT, NO_SETUID_FIXUP, NO_CAP_AMBIENT_RAISE and the locks (KEEP_CAPS's too).
  assert.equal(got.securebits, 0xef);
  assert.equal(fs.existsSync(path.join(cwd, 'null')), false);
});

test('no powers inside, as a normal user: the same refusals, also of what an unprivileged user may do outside (user namespaces, keyrings)', when(needs.sandbox, normalUserSkip), async () => {
  const dir = tempDir('agent-exec-nobody-');
  fs.chmodSync(dir, 0o777);
  fs.writeFileSync(path.join(dir, 'attacks.py'), ATTACKS);
  const script = path.join(dir, 'attack.js');
  fs.writeFileSync(
    script,
    `const a = require(${JSON.stringify(worldReadableEntry())});
     a.exec({ command: 'python3 attacks.py', cwd: ${JSON.stringify(dir)}, env: { KEY: process.argv[2] }, sandbox: true })
       .then((r) => console.log(JSON.stringify({ output: r.output, denials: r.sandbox.denials })),
             (e) => console.log(JSON.stringify({ error: e.code, message: e.message })));`,
  );
  await attackFromInside(async (key) => {
    const r = await run({ command: `${asNormalUser}${JSON.stringify(process.execPath)} ${script} ${key}`, cwd: dir, timeoutMs: 30000 });
    const got = JSON.parse(r.output.trim().split('\n').pop());
    assert.equal(got.error, undefined, got.message);
    return got;
  }, { boundingSet: false });
});

test('tool adapter: host auto runs in the configured sandbox, names refusals, and skips approvals', when(needs.sandbox), async () => {
  const api = require('../js/index.js');
  const dir = tempDir();
  const target = outside();
  const exec = api.createExecTool({ cwd: dir, sandbox: { network: false }, security: 'deny' });
  // One stream, so the order of "ok" and the shell's error is the order they were written in.
  const r = await exec.execute('1', { command: `{ echo in > in.txt && echo ok; echo out > ${target}; } 2>&1` });
  assert.equal(r.details.status, 'completed');
  assert.ok(fs.existsSync(path.join(dir, 'in.txt')));
  assert.equal(fs.existsSync(target), false);
  assert.match(r.content[0].text, /^ok\n.*Permission denied\n\n\(Command exited with code 1\)\n\nSandbox refused:\n- write \/etc\/agent-exec-sandbox-\S+: outside the writable roots$/s);
  assert.equal(r.details.sandbox.denials[0].path, target);
  // Explicit host=sandbox is the same runtime.
  const explicit = await exec.execute('2', { command: 'echo x > /etc/never-written; true', host: 'sandbox' });
  assert.equal(explicit.details.sandbox.denials[0].path, '/etc/never-written');
  // With a sandbox configured, auto may not be overridden to the gateway (OpenClaw B).
  await assert.rejects(exec.execute('3', { command: 'true', host: 'gateway' }), {
    message: 'exec host not allowed (requested gateway; configured host is auto; set tools.exec.host=gateway to allow this override).',
  });
  // Without a sandbox, host=sandbox keeps OpenClaw's error.
  await assert.rejects(api.createExecTool({}).execute('4', { command: 'true', host: 'sandbox' }), /^Error: exec host=sandbox requires a sandbox runtime/);
});

test('tool adapter: limits are named in the failure text; elevation leaves the sandbox', when(needs.sandbox), async () => {
  const api = require('../js/index.js');
  const exec = api.createExecTool({
    cwd: tempDir(),
    sandbox: { limits: { cpuSeconds: 1 } },
    elevated: { enabled: true, allowed: true, defaultLevel: 'full' },
  });
  const r = await exec.execute('1', { command: 'while :; do :; done', elevated: false });
  assert.equal(r.details.status, 'failed');
  assert.equal(r.content[0].text, 'Command stopped by the sandbox: the CPU limit (1 s per process) was reached');
  assert.equal(r.details.sandbox.limitExceeded, 'cpu');
  // Outside the sandbox's roots but writable by whoever runs the suite (root or not): a sibling dir.
  const target = path.join(tempDir(), 'elevated-write');
  const elevated = await exec.execute('2', { command: `echo out > ${target} && rm ${target} && echo wrote`, elevated: true });
  assert.equal(elevated.details.sandbox, undefined);
  assert.match(elevated.content[0].text, /wrote/);
});

test('a kill reaches a sandboxed descendant that dropped the session marker and left the group', when(needs.sandbox, !caps.cgroupVersion && 'no writable cgroup to track the run'), async () => {
  const token = String(process.pid).padStart(7, '0') + Date.now() % 1000;
  const found = waitFor(() => hostPids(`300.${token}`)[0], { what: 'the escaped sleep to start' });
  const r = await run({
    command: `env -u AGENT_EXEC_SESSION setsid sleep 300.${token} >/dev/null 2>&1 & sleep 30`,
    cwd: tempDir(),
    sandbox: true,
    timeoutMs: 1000,
    killGraceMs: 200,
  });
  // Found before the run ends (it is killed with it), as the host sees it.
  const escaped = await found;
  track(escaped);
  assert.equal(r.timedOut, true);
  assert.ok(r.sandbox.mechanisms.some((m) => /^cgroup v[12] \(tracking\)$/.test(m)), r.sandbox.mechanisms.join());
  await waitFor(() => !alive(escaped), { what: `the escaped sleep ${escaped} to be killed` });
  assert.deepEqual(r.survivors, []);
});
