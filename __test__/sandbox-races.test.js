'use strict';
// The supervisor judges a path it read from the caller's memory, then the call goes on. If the kernel
// read the path again after the judgment (SECCOMP_USER_NOTIF_FLAG_CONTINUE), a second thread of the
// caller could rewrite the path, or swap a directory on it for a link, between the two reads: the
// judgment would be of one name and the write of another. These tests run those races for a bounded
// number of tries and check the host's side: nothing planted where only the supervisor guards (a name
// that does not exist yet, a nested host repository's hooks), and the run's own writes still work.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const { native, killTracked, tempDir, run } = require('./helpers.js');

test.after(killTracked);

const caps = native.sandboxCapabilities();
const noSandbox = !caps.enforceable && `this host cannot sandbox: ${caps.problems.join('; ')}`;
const noPython = spawnSync('python3', ['-c', '1']).status !== 0 && 'python3 is not installed';
const when = (...reasons) => ({ skip: reasons.find(Boolean) || false });

/** A root holding a git repository (it has protected names), its realpath. */
function repoRoot() {
  const root = fs.realpathSync(tempDir('agent-exec-races-'));
  const git = spawnSync('git', ['init', '-q', root]);
  assert.equal(git.status, 0, String(git.stderr));
  return root;
}

/** Python run in the sandbox: `body` after a prelude with libc and a racing-thread helper. */
function py(body) {
  const prelude = [
    'import ctypes, os, threading, time',
    'libc = ctypes.CDLL(None, use_errno=True)',
    'stop = threading.Event()',
    'def racing(step):',
    '    def loop():',
    '        while not stop.is_set():',
    '            step()',
    '    t = threading.Thread(target=loop, daemon=True)',
    '    t.start()',
    '    return t',
    // Bounded by tries and by time: the test must end whether the race is won or not.
    'deadline = time.monotonic() + 15',
    // A second thread writing each of `values` into `buf` in turn, for good.
    'def flipping(buf, *values):',
    '    def flip():',
    '        for v in values:',
    '            ctypes.memmove(buf, v, len(v))',
    '    ctypes.memmove(buf, values[-1], len(values[-1]))',
    '    return racing(flip)',
    // `attempt()` until `won()`, at most 3000 times or until the deadline; the racing thread stops.
    'def race(won, attempt):',
    '    tries = 0',
    '    while tries < 3000 and time.monotonic() < deadline and not won():',
    '        tries += 1',
    '        attempt()',
    '    stop.set()',
    '    return tries',
  ];
  return `python3 - <<'PY'\n${[...prelude, ...body].join('\n')}\nPY`;
}

/** Run the Python `lines` in a sandbox over `root`: the run must end well and the race held. */
async function heldRace(root, lines) {
  const r = await run({ command: py(lines), cwd: root, sandbox: { writableRoots: [root] } });
  assert.equal(r.exitCode, 0, r.output);
  assert.match(r.output, /tries \d+ held/, r.output);
  return r;
}

// Each try: the main thread makes a call on a buffer a second thread keeps rewriting between an
// allowed name and a protected one. The supervisor must judge and act on the same copy.
const rewrites = {
  'open(O_CREAT)': 'fd = libc.open(buf, os.O_WRONLY | os.O_CREAT, 0o644); fd >= 0 and libc.close(fd)',
  mkdir: 'libc.mkdir(buf, 0o755)',
  symlink: 'libc.symlink(b"/tmp", buf)',
  'rename': 'open("src", "w").close(); libc.rename(b"src", buf)',
  'link': 'open("src", "w").close(); libc.link(b"src", buf)',
};

for (const [call, attempt] of Object.entries(rewrites)) {
  test(`a path rewritten by another thread while the supervisor judges it plants nothing: ${call}`, when(noSandbox, noPython), async () => {
    const root = repoRoot();
    const r = await heldRace(root, [
      'buf = ctypes.create_string_buffer(64)',
      'flipping(buf, b".envrc\\0\\0\\0\\0\\0\\0\\0", b"allowed-name\\0")',
      'def attempt():',
      `    ${attempt}`,
      '    for n in ("allowed-name", "src"):',
      '        try:',
      '            os.rmdir(n) if os.path.isdir(n) and not os.path.islink(n) else os.unlink(n)',
      '        except OSError:',
      '            pass',
      'tries = race(lambda: os.path.lexists(".envrc"), attempt)',
      'print("tries", tries, "planted" if os.path.lexists(".envrc") else "held")',
    ]);
    assert.match(r.output, /tries \d+ held/, r.output);
    assert.equal(fs.existsSync(path.join(root, '.envrc')), false, 'the run planted .envrc');
    assert.ok(r.sandbox.denials.some((d) => d.path === path.join(root, '.envrc')), 'no denial names .envrc');
  });
}

test('a directory swapped for a link while the supervisor judges a write beneath it reaches no host repository hook', when(noSandbox, noPython), async () => {
  const root = repoRoot();
  // A nested repository of the host's (vendored): its hooks are guarded by the supervisor alone.
  const nested = path.join(root, 'vendor', 'lib');
  fs.mkdirSync(nested, { recursive: true });
  assert.equal(spawnSync('git', ['init', '-q', nested]).status, 0);
  const hooks = path.join(nested, '.git', 'hooks');
  // A git dir born in the run's first tick of the coarse clock would count as the run's.
  await new Promise((resolve) => setTimeout(resolve, 20));
  const r = await heldRace(root, [
    'os.mkdir("d")',
    'os.symlink("vendor/lib/.git/hooks", "l")',
    'SYS_renameat2, AT_FDCWD, RENAME_EXCHANGE = 316, -100, 2',
    'def swap():',
    '    libc.syscall(SYS_renameat2, AT_FDCWD, b"d", AT_FDCWD, b"l", RENAME_EXCHANGE)',
    'racing(swap)',
    'hook = "vendor/lib/.git/hooks/post-checkout"',
    'def attempt():',
    '    fd = libc.open(b"d/post-checkout", os.O_WRONLY | os.O_CREAT, 0o755)',
    '    fd >= 0 and libc.close(fd)',
    'tries = race(lambda: os.path.exists(hook), attempt)',
    'made = os.path.isdir("d") and os.path.exists("d/post-checkout") or os.path.isdir("l") and os.path.exists("l/post-checkout")',
    'print("tries", tries, "planted" if os.path.exists(hook) else "held", "made" if made else "none")',
  ]);
  assert.match(r.output, /tries \d+ held/, r.output);
  assert.deepEqual(fs.readdirSync(hooks).filter((n) => !n.endsWith('.sample')), [], 'a hook was planted');
  // The run's own directory took the file on the tries the swap did not interfere with.
  assert.match(r.output, / made\n?$/, r.output);
});

/** A root with a nested repository of the host's and a disabled hook in it; returns both paths. */
async function rootWithHostHook() {
  const root = repoRoot();
  const nested = path.join(root, 'vendor', 'lib');
  fs.mkdirSync(nested, { recursive: true });
  assert.equal(spawnSync('git', ['init', '-q', nested]).status, 0);
  const hook = path.join(nested, '.git', 'hooks', 'post-checkout');
  fs.writeFileSync(hook, '#!/bin/sh\necho ran\n', { mode: 0o644 });
  // A git dir born in the run's first tick of the coarse clock would count as the run's.
  await new Promise((resolve) => setTimeout(resolve, 20));
  return { root, hook };
}

test('a regular file swapped for a link by another run while the supervisor judges its rename or link into the host\'s git directory puts no link there', when(noSandbox, noPython), async () => {
  // One run's calls are judged and made one at a time, so a race needs a second run on the same
  // root (an agent's parallel sessions): it keeps exchanging `src` between a regular file and a
  // link out of the roots while the first renames and links `src` into a repository of the host's
  // nested in the root (its .git is no mount of its own; a root's own repository's is, and a
  // rename into it from outside fails EXDEV in the kernel).
  const root = repoRoot();
  assert.equal(spawnSync('git', ['init', '-q', path.join(root, 'lib')]).status, 0);
  const out = fs.realpathSync(tempDir('agent-exec-races-out-'));
  const victim = path.join(out, 'victim');
  fs.writeFileSync(victim, 'original\n');
  // (Both runs make what is missing: one may beat the other to it.)
  const setup = [
    'def ready():',
    '    if not os.path.lexists("src"):',
    '        open("src", "w").close()',
    '    if not os.path.lexists("alt"):',
    '        try:',
    '            os.symlink(' + JSON.stringify(victim) + ', "alt")',
    '        except FileExistsError:',
    '            pass',
    'ready()',
  ];
  const swapper = run({
    command: py([
      ...setup,
      'n = 0',
      'while not os.path.exists("stop") and time.monotonic() < deadline:',
      '    libc.syscall(316, -100, b"src", -100, b"alt", 2)',
      '    n += 1',
      '    if n % 64 == 0:',
      '        ready()',
      'print("swapped", n)',
    ]),
    cwd: root,
    sandbox: { writableRoots: [root] },
  });
  const r = await heldRace(root, [
    ...setup,
    'def planted():',
    '    return any(os.path.islink(os.path.join("lib/.git", n)) for n in ("COMMIT_EDITMSG", "ORIG_HEAD"))',
    'def attempt():',
    '    ready()',
    '    libc.rename(b"src", b"lib/.git/COMMIT_EDITMSG")',
    '    libc.link(b"src", b"lib/.git/ORIG_HEAD")',
    '    try:',
    '        os.unlink("lib/.git/ORIG_HEAD")',
    '    except OSError:',
    '        pass',
    'tries = race(planted, attempt)',
    'open("stop", "w").close()',
    'print("tries", tries, "planted" if planted() else "held")',
  ]);
  const swapped = await swapper;
  assert.match(swapped.output, /swapped [1-9]/, swapped.output);
  assert.match(r.output, /tries \d+ held/, r.output);
  for (const n of ['COMMIT_EDITMSG', 'ORIG_HEAD']) {
    const st = fs.lstatSync(path.join(root, 'lib', '.git', n), { throwIfNoEntry: false });
    assert.ok(!st || st.isFile(), `${n} is a link`);
  }
  assert.equal(fs.readFileSync(victim, 'utf8'), 'original\n');
});

test('a path rewritten while the supervisor judges a chmod turns no host hook on', when(noSandbox, noPython), async () => {
  const { root, hook } = await rootWithHostHook();
  const r = await heldRace(root, [
    'open("allowed-name", "w").close()',
    'buf = ctypes.create_string_buffer(64)',
    'flipping(buf, b"vendor/lib/.git/hooks/post-checkout\\0", b"allowed-name\\0")',
    'hook = "vendor/lib/.git/hooks/post-checkout"',
    'tries = race(lambda: os.access(hook, os.X_OK), lambda: libc.chmod(buf, 0o755))',
    'print("tries", tries, "planted" if os.access(hook, os.X_OK) else "held", oct(os.stat("allowed-name").st_mode & 0o777))',
  ]);
  assert.match(r.output, /tries \d+ held 0o755/, r.output);
  assert.equal(fs.statSync(hook).mode & 0o777, 0o644, 'the host hook was made executable');
});

test('a descriptor swapped while the supervisor judges an fchmod turns no host hook on', when(noSandbox, noPython), async () => {
  const { root, hook } = await rootWithHostHook();
  const r = await heldRace(root, [
    'mine = os.open("mine", os.O_RDWR | os.O_CREAT, 0o644)',
    'theirs = os.open("vendor/lib/.git/hooks/post-checkout", os.O_RDONLY)',
    'N = 100',
    'os.dup2(mine, N)',
    'def swap():',
    '    os.dup2(theirs, N)',
    '    os.dup2(mine, N)',
    'racing(swap)',
    'hook = "vendor/lib/.git/hooks/post-checkout"',
    'tries = race(lambda: os.access(hook, os.X_OK), lambda: libc.fchmod(N, 0o755))',
    'print("tries", tries, "planted" if os.access(hook, os.X_OK) else "held")',
  ]);
  assert.match(r.output, /tries \d+ held/, r.output);
  assert.equal(fs.statSync(hook).mode & 0o777, 0o644, 'the host hook was made executable');
  assert.equal(fs.statSync(path.join(root, 'mine')).mode & 0o777, 0o755, 'the run\'s own file kept its mode');
});

test('an openat2 mode rewritten while the supervisor judges it makes no set-user-ID file', when(noSandbox, noPython), async () => {
  const root = repoRoot();
  const r = await heldRace(root, [
    'import struct',
    'how = ctypes.create_string_buffer(24)',
    'safe = struct.pack("QQQ", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o755, 0)',
    'setid = struct.pack("QQQ", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o4755, 0)',
    'flipping(how, setid, safe)',
    'made = 0',
    'def setuid():',
    '    return os.path.exists("f") and os.stat("f").st_mode & 0o6000',
    'def attempt():',
    '    global made',
    '    fd = libc.syscall(437, -100, b"f", how, 24)',
    '    if fd >= 0:',
    '        made += 1',
    '        libc.close(fd)',
    '        if not setuid():',
    '            os.unlink("f")',
    'tries = race(setuid, attempt)',
    'print("tries", tries, "planted" if setuid() else "held", "made" if made else "none")',
  ]);
  assert.match(r.output, /tries \d+ held made/, r.output);
  assert.ok(!fs.existsSync(path.join(root, 'f')) || (fs.statSync(path.join(root, 'f')).mode & 0o6000) === 0, 'a set-user-ID file was made');
});

test('a lock struct rewritten while the supervisor judges an unlock takes no lock on a host file', when(noSandbox, noPython), async () => {
  const root = repoRoot();
  const r = await heldRace(root, [
    'import fcntl, struct',
    'F_OFD_GETLK, F_OFD_SETLK = 36, 37',
    'fd = os.open("/etc/passwd", os.O_RDONLY)',
    'probe = os.open("/etc/passwd", os.O_RDONLY)',
    // struct flock: l_type, l_whence (shorts), l_start, l_len (off_t), l_pid (int), padding.
    'lk = ctypes.create_string_buffer(32)',
    'unlock = struct.pack("hhqqi4x", fcntl.F_UNLCK, 0, 0, 0, 0)',
    'read_lock = struct.pack("hhqqi4x", fcntl.F_RDLCK, 0, 0, 0, 0)',
    'def held():',
    // A write-lock query from another open file description meets the read lock, if one is held.
    '    q = struct.pack("hhqqi4x", fcntl.F_WRLCK, 0, 0, 0, 0)',
    '    return struct.unpack("hhqqi4x", fcntl.fcntl(probe, F_OFD_GETLK, q))[0] != fcntl.F_UNLCK',
    'flipping(lk, read_lock, unlock)',
    'tries = race(held, lambda: libc.fcntl(fd, F_OFD_SETLK, lk))',
    'print("tries", tries, "planted" if held() else "held")',
  ]);
  assert.match(r.output, /tries \d+ held/, r.output);
});

test('a path rewritten while the supervisor judges a setxattr sets nothing on a host repository\'s hook', when(noSandbox, noPython), async () => {
  const { root, hook } = await rootWithHostHook();
  const r = await heldRace(root, [
    'open("allowed-name", "w").close()',
    'buf = ctypes.create_string_buffer(64)',
    'flipping(buf, b"vendor/lib/.git/hooks/post-checkout\\0", b"allowed-name\\0")',
    'hook = "vendor/lib/.git/hooks/post-checkout"',
    'def marked():',
    '    return "user.planted" in os.listxattr(hook)',
    'tries = race(marked, lambda: libc.setxattr(buf, b"user.planted", b"1", 1, 0))',
    'print("tries", tries, "planted" if marked() else "held", os.listxattr("allowed-name"))',
  ]);
  assert.match(r.output, /tries \d+ held \['user.planted'\]/, r.output);
  assert.deepEqual(fs.readdirSync(path.dirname(hook)).length > 0, true);
  const host = spawnSync('python3', ['-c', `import os; print(os.listxattr(${JSON.stringify(hook)}))`], { encoding: 'utf8' });
  assert.equal(host.stdout.trim(), '[]', 'an attribute was set on the host\'s hook');
});

test('a socket address rewritten while the supervisor judges a bind makes no protected name', when(noSandbox, noPython), async () => {
  const root = repoRoot();
  const r = await heldRace(root, [
    'import socket, struct',
    'addr = ctypes.create_string_buffer(110)',
    'good = struct.pack("H", socket.AF_UNIX) + b"allowed.sock\\0"',
    'bad = struct.pack("H", socket.AF_UNIX) + b".envrc\\0\\0\\0\\0\\0\\0\\0"',
    'flipping(addr, bad, good)',
    'bound = 0',
    'def attempt():',
    '    global bound',
    '    s = socket.socket(socket.AF_UNIX)',
    '    if libc.bind(s.fileno(), addr, 2 + 13) == 0:',
    '        bound += 1',
    '    s.close()',
    '    try:',
    '        os.unlink("allowed.sock")',
    '    except OSError:',
    '        pass',
    'tries = race(lambda: os.path.lexists(".envrc"), attempt)',
    'print("tries", tries, "planted" if os.path.lexists(".envrc") else "held", "bound" if bound else "none")',
  ]);
  assert.match(r.output, /tries \d+ held bound/, r.output);
  assert.equal(fs.existsSync(path.join(root, '.envrc')), false);
});

test('an openat2 for reading whose flags another thread turns into a write plants nothing', when(noSandbox, noPython), async () => {
  const root = repoRoot();
  const r = await heldRace(root, [
    'import struct',
    'how = ctypes.create_string_buffer(24)',
    'reading = struct.pack("QQQ", os.O_RDONLY, 0, 0)',
    'writing = struct.pack("QQQ", os.O_WRONLY | os.O_CREAT, 0o644, 0)',
    'flipping(how, writing, reading)',
    'def attempt():',
    '    fd = libc.syscall(437, -100, b".envrc", how, 24)',
    '    fd >= 0 and libc.close(fd)',
    'tries = race(lambda: os.path.lexists(".envrc"), attempt)',
    'print("tries", tries, "planted" if os.path.lexists(".envrc") else "held")',
    'print("reads", open("/etc/hostname").read() != "" or True)',
  ]);
  assert.match(r.output, /tries \d+ held/, r.output);
  assert.equal(fs.existsSync(path.join(root, '.envrc')), false);
});
