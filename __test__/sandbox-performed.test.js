'use strict';
// The supervisor makes a sandboxed run's creations, removals, renames, links and write opens itself
// (core/src/sandbox/perform.rs). What a program sees must stay what the kernel would have given it:
// modes shaped by its umask, FIFOs that wait for their reader, files reopened through /proc, an
// O_TMPFILE given a name, openat2's restrictions, errors with their usual numbers. Each test runs a real
// program in the sandbox and checks the files on the host.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const { native, killTracked, tempDir, run, waitFor } = require('./helpers.js');

test.after(killTracked);

const caps = native.sandboxCapabilities();
const noSandbox = !caps.enforceable && `this host cannot sandbox: ${caps.problems.join('; ')}`;
const noPython = spawnSync('python3', ['-c', '1']).status !== 0 && 'python3 is not installed';
const when = (...reasons) => ({ skip: reasons.find(Boolean) || false });
const py = (lines) => `python3 - <<'PY'\n${lines.join('\n')}\nPY`;

function root() {
  return fs.realpathSync(tempDir('agent-exec-performed-'));
}

const mode = (p) => (fs.lstatSync(p).mode & 0o7777).toString(8);

test('files and directories a run makes get the modes its umask gives, as it changes', when(noSandbox), async () => {
  const dir = root();
  const r = await run({
    command: [
      'umask 022; echo a > a; mkdir da; mkfifo fa',
      'umask 077; echo b > b; mkdir db; mkfifo fb',
      '(umask 002; echo c > c; mkdir dc)',
      'echo d > d',
      'install -m 640 a e',
      'echo done',
    ].join('; '),
    cwd: dir,
    sandbox: { writableRoots: [dir] },
  });
  assert.equal(r.exitCode, 0, r.output);
  const got = Object.fromEntries(['a', 'da', 'fa', 'b', 'db', 'fb', 'c', 'dc', 'd', 'e'].map((n) => [n, mode(path.join(dir, n))]));
  assert.deepEqual(got, { a: '644', da: '755', fa: '644', b: '600', db: '700', fb: '600', c: '664', dc: '775', d: '600', e: '640' });
});

test('a FIFO opened for writing waits for its reader, and pipes reopened through /proc carry data', when(noSandbox), async () => {
  const dir = root();
  const r = await run({
    command: [
      'mkfifo p',
      '(sleep 0.3; cat p > got) & echo through-fifo > p; wait',
      'cat got',
      'echo to-stdout > /dev/stdout',
      'echo to-fd > /proc/self/fd/1',
      'cat <(echo substituted)',
      'echo via-sub > >(cat > sub.txt); wait; sleep 0.2; cat sub.txt',
    ].join('; '),
    cwd: dir,
    sandbox: { writableRoots: [dir] },
  });
  assert.equal(r.exitCode, 0, r.output);
  assert.equal(r.output, 'through-fifo\nto-stdout\nto-fd\nsubstituted\nvia-sub\n');
});

test('a deleted file reopened through /proc/self/fd is the same file, and an O_TMPFILE is given a name', when(noSandbox, noPython), async () => {
  const dir = root();
  const r = await run({
    command: py([
      'import os',
      'fd = os.open("gone", os.O_RDWR | os.O_CREAT, 0o600)',
      'os.unlink("gone")',
      'again = os.open(f"/proc/self/fd/{fd}", os.O_WRONLY)',
      'os.write(again, b"same file")',
      'print(os.pread(fd, 9, 0).decode(), os.path.lexists("gone"), os.path.lexists("gone (deleted)"))',
      'tmp = os.open(".", os.O_TMPFILE | os.O_WRONLY, 0o640)',
      'os.write(tmp, b"anonymous")',
      'import ctypes',
      'libc = ctypes.CDLL(None, use_errno=True)',
      // linkat with AT_SYMLINK_FOLLOW: the way to name an O_TMPFILE (link(2) would link the /proc link).
      'assert libc.linkat(-100, f"/proc/self/fd/{tmp}".encode(), -100, b"named", 0x400) == 0, os.strerror(ctypes.get_errno())',
      'print(open("named").read())',
    ]),
    cwd: dir,
    sandbox: { writableRoots: [dir] },
  });
  assert.equal(r.exitCode, 0, r.output);
  assert.equal(r.output, 'same file False False\nanonymous\n');
  assert.equal(fs.readFileSync(path.join(dir, 'named'), 'utf8'), 'anonymous');
  assert.equal(mode(path.join(dir, 'named')), '640');
});

test('openat2 keeps the restrictions a program asks of its own lookup', when(noSandbox, noPython), async () => {
  const dir = root();
  fs.mkdirSync(path.join(dir, 'box'));
  fs.symlinkSync('..', path.join(dir, 'box', 'up'));
  fs.symlinkSync('inside', path.join(dir, 'box', 'rel'));
  const r = await run({
    command: py([
      'import ctypes, os, struct',
      'libc = ctypes.CDLL(None, use_errno=True)',
      'box = os.open("box", os.O_RDONLY | os.O_DIRECTORY)',
      'def openat2(name, resolve):',
      '    how = struct.pack("QQQ", os.O_WRONLY | os.O_CREAT, 0o644, resolve)',
      '    fd = libc.syscall(437, box, name, how, len(how))',
      '    return "ok" if fd >= 0 else os.strerror(ctypes.get_errno())',
      'RESOLVE_NO_SYMLINKS, RESOLVE_BENEATH = 0x04, 0x08',
      'print("beneath-escape", openat2(b"up/escaped", RESOLVE_BENEATH))',
      'print("beneath-abs", openat2(os.path.abspath("abs").encode(), RESOLVE_BENEATH))',
      'print("no-symlinks", openat2(b"rel", RESOLVE_NO_SYMLINKS))',
      'print("plain", openat2(b"plain", RESOLVE_BENEATH))',
    ]),
    cwd: dir,
    sandbox: { writableRoots: [dir] },
  });
  assert.equal(r.exitCode, 0, r.output);
  assert.match(r.output, /^beneath-escape Invalid cross-device link$/m);
  assert.match(r.output, /^beneath-abs Invalid cross-device link$/m);
  assert.match(r.output, /^no-symlinks Too many levels of symbolic links$/m);
  assert.match(r.output, /^plain ok$/m);
  assert.deepEqual(['escaped', 'abs', 'box/inside'].filter((n) => fs.existsSync(path.join(dir, n))), []);
  assert.ok(fs.existsSync(path.join(dir, 'box', 'plain')));
});

test('the usual errors keep their numbers: missing parents, existing names, non-empty directories, cross-device renames', when(noSandbox), async () => {
  const dir = root();
  const r = await run({
    command: [
      'echo x > missing/f 2>&1 || echo "open:$?"',
      'mkdir d; mkdir d 2>&1 | sed "s/.*: //"',
      'touch d/f; rmdir d 2>&1 | sed "s/.*: //"',
      'ln -s nowhere dangling; echo made > dangling; cat nowhere',
      'set -o noclobber; echo y > nowhere 2>&1 | sed "s/.*: //"; set +o noclobber',
      'python3 -c "import os; os.rename(\'nowhere\', \'/dev/shm/moved\')" 2>&1 | tail -1 | sed "s/.*] //"',
    ].join('; '),
    cwd: dir,
    sandbox: { writableRoots: [dir] },
  });
  assert.match(r.output, /No such file or directory/);
  assert.match(r.output, /^File exists$/m);
  assert.match(r.output, /^Directory not empty$/m);
  assert.match(r.output, /^made$/m);
  assert.match(r.output, /nowhere: cannot overwrite existing file$/m);
  assert.match(r.output, /^Invalid cross-device link/m);
});

test('/dev/tty is the run\'s own terminal: never one of the host\'s with the same number', when(noSandbox, noPython), async (t) => {
  if (!caps.denyRead) return t.skip('no mount namespace: the run shares the host\'s devpts');
  // Hold host terminals up to number 3, so the run's own first terminal has a twin on the host.
  const holder = require('node:child_process').spawn('python3', ['-c', [
    'import os, sys, time',
    'held = []',
    'while len(held) < 8:',
    '    m, s = os.openpty(); held.append((m, s))',
    '    if os.ttyname(s) in ("/dev/pts/0", "/dev/pts/1", "/dev/pts/2", "/dev/pts/3") and len(held) >= 4: break',
    'print("ready", flush=True)',
    'time.sleep(60)',
  ].join('\n')], { stdio: ['ignore', 'pipe', 'inherit'] });
  require('./helpers.js').track(holder.pid);
  await new Promise((resolve) => holder.stdout.once('data', resolve));
  try {
    const dir = root();
    const r = await run({
      command: py([
        'import os, pty, fcntl, termios',
        'm, s = pty.openpty()',
        'own = os.fstat(s).st_dev',
        'pid = os.fork()',
        'if pid == 0:',
        '    os.setsid(); fcntl.ioctl(s, termios.TIOCSCTTY, 0)',
        '    os.chmod(os.ttyname(s), 0)',
        '    try:',
        '        t = os.open("/dev/tty", os.O_RDWR)',
        '        print("same" if os.fstat(t).st_dev == own else "other", flush=True)',
        '    except OSError as e:',
        '        print("refused", e.errno, flush=True)',
        '    os._exit(0)',
        'os.waitpid(pid, 0)',
      ]),
      cwd: dir,
      sandbox: { writableRoots: [dir] },
    });
    assert.match(r.output, /^(same|refused \d+)$/m, r.output);
  } finally {
    holder.kill('SIGKILL');
  }
});

test('a FIFO nobody reads holds only its writer: the run goes on, and later runs\' FIFOs work', when(noSandbox, noPython), async () => {
  const dir = root();
  const r = await run({
    command: [
      'mkfifo p',
      // Writers that wait for a reader that never comes, each ended by timeout; meanwhile the run's
      // other calls are answered.
      'for i in 1 2 3; do timeout 1 sh -c "echo x > p" & done',
      "{ timeout 1 python3 -c 'import os; fd = os.open(\"p\", os.O_PATH); os.open(f\"/proc/self/fd/{fd}\", os.O_WRONLY)' & }",
      'echo still > served && cat served',
      "python3 -c 'import os, ctypes, struct; l = ctypes.CDLL(None, use_errno=True); fd = os.open(\"p\", os.O_PATH); h = struct.pack(\"QQQ\", os.O_WRONLY, 0, 8); print(\"dirfd-fifo\", l.syscall(437, fd, b\".\", h, 24), ctypes.get_errno())'",
      'wait; echo waited',
    ].join('; '),
    cwd: dir,
    sandbox: { writableRoots: [dir] },
    // A wedged supervisor would hang the run: it fails here instead.
    timeoutMs: 30000,
  });
  assert.equal(r.exitCode, 0, r.output);
  assert.match(r.output, /^still$/m);
  assert.match(r.output, /^dirfd-fifo -1 20$/m, 'openat2 beneath a FIFO: ENOTDIR');
  assert.match(r.output, /waited\n$/);
  const next = await run({
    command: 'mkfifo q; (sleep 0.3; cat q) & echo through > q; wait',
    cwd: dir,
    sandbox: { writableRoots: [dir] },
    timeoutMs: 30000,
  });
  assert.equal(next.output, 'through\n');
});

test('opens answer as the kernel would: memfds, trailing slashes, flags, openat2\'s checks, long paths', when(noSandbox, noPython), async () => {
  const dir = root();
  fs.writeFileSync(path.join(dir, 'file'), '');
  const r = await run({
    command: py([
      'import ctypes, os, struct',
      'libc = ctypes.CDLL(None, use_errno=True)',
      'def err(f):',
      '    try:',
      '        fd = f()',
      '        return "ok" if (fd if isinstance(fd, int) else 0) >= 0 else os.strerror(ctypes.get_errno())',
      '    except OSError as e:',
      '        return os.strerror(e.errno)',
      'm = os.memfd_create("m")',
      'print("memfd", err(lambda: os.open(f"/proc/self/fd/{m}", os.O_RDWR)))',
      'print("create-slash", err(lambda: os.open("newd/", os.O_WRONLY | os.O_CREAT, 0o644)), os.path.exists("newd"))',
      'print("file-slash", err(lambda: os.open("file/", os.O_WRONLY)))',
      'fd = os.open("plain", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)',
      'import fcntl',
      'print("getfl", oct(fcntl.fcntl(fd, fcntl.F_GETFL) & ~0o100000))',
      'def openat2(name, flags, mode, size=24, tail=b""):',
      '    how = struct.pack("QQQ", flags, mode, 0) + tail',
      '    return lambda: libc.syscall(437, -100, name, how, size)',
      'print("mode-without-creat", err(openat2(b"a", os.O_WRONLY, 0o644)))',
      'print("mode-too-big", err(openat2(b"b", os.O_WRONLY | os.O_CREAT, 0o10644)))',
      'print("small-size", err(openat2(b"c", os.O_WRONLY | os.O_CREAT, 0o644, 16)))',
      'print("tail", err(openat2(b"d", os.O_WRONLY | os.O_CREAT, 0o644, 32, b"\\x01" + bytes(7))))',
      'print("unknown-flag", err(openat2(b"e", os.O_WRONLY | os.O_CREAT | 0o10000000000, 0o644)))',
      'print("long", err(lambda: libc.open(b"x" * 5000, os.O_WRONLY | os.O_CREAT, 0o644)))',
      'print("open-unknown-flag", err(lambda: libc.open(b"f", os.O_WRONLY | os.O_CREAT | 0o10000000000, 0o644)))',
    ]),
    cwd: dir,
    sandbox: { writableRoots: [dir] },
  });
  assert.equal(r.exitCode, 0, r.output);
  const lines = Object.fromEntries(r.output.trim().split('\n').map((l) => [l.split(' ')[0], l.slice(l.indexOf(' ') + 1)]));
  assert.deepEqual(lines, {
    memfd: 'ok',
    'create-slash': 'Is a directory False',
    'file-slash': 'Not a directory',
    getfl: '0o2001',
    'mode-without-creat': 'Invalid argument',
    'mode-too-big': 'Invalid argument',
    'small-size': 'Invalid argument',
    tail: 'Argument list too long',
    'unknown-flag': 'Invalid argument',
    long: 'File name too long',
    'open-unknown-flag': 'ok',
  });
  assert.deepEqual(r.sandbox.denials, []);
});

/** Threads of this process waiting in a FIFO's open. */
function threadsInFifoOpen() {
  return fs.readdirSync('/proc/self/task').filter((t) => {
    try {
      return fs.readFileSync(`/proc/self/task/${t}/wchan`, 'utf8') === 'wait_for_partner';
    } catch {
      return false;
    }
  }).length;
}

test('FIFO opens for reading, and a FIFO swapped in under an open, keep no thread of the host\'s waiting', when(noSandbox, noPython), async () => {
  const dir = root();
  const before = threadsInFifoOpen();
  const r = await run({
    command: [
      'mkfifo p',
      // Opens for reading that a blocking open would hold until a writer came.
      "python3 -c 'import os, threading; [threading.Thread(target=lambda: os.open(\"p\", os.O_RDONLY | os.O_CREAT), daemon=True).start() for _ in range(16)]; import time; time.sleep(0.5)'",
      // A regular file and a FIFO swapped at one name while a writer opens it.
      "{ python3 -c 'import os, time\nend = time.monotonic() + 2\nwhile time.monotonic() < end:\n    try: os.unlink(\"f\")\n    except OSError: pass\n    try: os.mkfifo(\"f\")\n    except OSError: pass' & }",
      "timeout 5 python3 -c 'import os, time\nend = time.monotonic() + 2\nwhile time.monotonic() < end:\n    try: os.close(os.open(\"f\", os.O_WRONLY | os.O_CREAT | os.O_NONBLOCK))\n    except OSError: pass\n    try: os.close(os.open(\"f\", os.O_WRONLY | os.O_CREAT))\n    except OSError: pass'",
      'wait; echo done',
    ].join('; '),
    cwd: dir,
    sandbox: { writableRoots: [dir] },
    timeoutMs: 30000,
  });
  assert.match(r.output, /done\n$/, r.output);
  await waitFor(() => threadsInFifoOpen() <= before, { timeoutMs: 10000, what: 'no supervisor thread left in a FIFO open' });
});

test('openat2 for reading is not made for the run (ENOSYS): what it reads, the kernel decides through openat', when(noSandbox, noPython), async () => {
  const dir = root();
  fs.writeFileSync(path.join(dir, 'plain'), 'plain\n');
  const r = await run({
    command: py([
      'import ctypes, os, struct',
      'libc = ctypes.CDLL(None, use_errno=True)',
      'def openat2(dirfd, name, resolve):',
      '    how = struct.pack("QQQ", os.O_RDONLY, 0, resolve)',
      '    fd = libc.syscall(437, dirfd, name, how, 24)',
      '    if fd < 0:',
      '        return os.strerror(ctypes.get_errno())',
      '    return os.read(fd, 100).decode().strip()',
      'print("openat2", openat2(-100, b"plain", 0))',
      'print("in-root", openat2(os.open(".", os.O_PATH), b"plain", 0x10))',
      // The namespace's init shares the agent's memory: an open made by the supervisor reached it.
      'print("init", openat2(-100, b"/proc/1/environ", 0))',
      'print("openat", open("plain").read().strip())',
    ]),
    cwd: dir,
    sandbox: { writableRoots: [dir] },
  });
  assert.equal(r.exitCode, 0, r.output);
  assert.equal(r.output, 'openat2 Function not implemented\nin-root Function not implemented\ninit Function not implemented\nopenat plain\n');
});

// The supervisor makes a run's links itself, outside the run's Landlock domain. A link of a file from
// outside the roots would give that file the roots' rights: written (or read, if it is a credential)
// through its new name. Landlock answers such a link EXDEV, and so must the supervisor, by every way of
// naming the source, with and without a mount namespace (where the mounts alone answered it before).
const linkAttack = (outside, canary, secret) => py([
  'import ctypes, os',
  'libc = ctypes.CDLL(None, use_errno=True)',
  'AT_FDCWD, AT_EMPTY_PATH, AT_SYMLINK_FOLLOW = -100, 0x1000, 0x400',
  'follow = lambda src, dst: libc.linkat(AT_FDCWD, src.encode(), AT_FDCWD, dst.encode(), AT_SYMLINK_FOLLOW)',
  'def attempt(name, make, write=True):',
  '    try:',
  '        r = make()',
  '        if r is not None and r < 0:',
  '            raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))',
  '    except OSError as e:',
  '        print(name, "refused", e.errno); return',
  '    try:',
  '        with open(name, "r+") as f:',
  '            print(name, "linked, read", f.read().strip())',
  '            if write: f.seek(0); f.write("PWNED")',
  '    except OSError as e:',
  '        print(name, "linked, not opened", e.errno)',
  `canary, secret, outside = ${JSON.stringify(canary)}, ${JSON.stringify(secret)}, ${JSON.stringify(outside)}`,
  'attempt("plain", lambda: os.link(canary, "plain"))',
  'attempt("credential", lambda: os.link(secret, "credential"))',
  'os.symlink(canary, "to-canary"); os.symlink(outside, "to-outside")',
  'attempt("via-file-link", lambda: follow("to-canary", "via-file-link"))',
  'attempt("via-dir-link", lambda: os.link("to-outside/canary", "via-dir-link"))',
  'rd = os.open(canary, os.O_RDONLY)',
  'attempt("proc-fd", lambda: follow(f"/proc/self/fd/{rd}", "proc-fd"))',
  'attempt("dev-fd", lambda: follow(f"/dev/fd/{rd}", "dev-fd"))',
  'attempt("empty-path", lambda: libc.linkat(rd, b"", AT_FDCWD, b"empty-path", AT_EMPTY_PATH))',
  'op = os.open(canary, os.O_PATH)',
  'attempt("o-path", lambda: libc.linkat(op, b"", AT_FDCWD, b"o-path", AT_EMPTY_PATH))',
  'od = os.open(outside, os.O_PATH | os.O_DIRECTORY)',
  'attempt("dirfd", lambda: libc.linkat(od, b"canary", AT_FDCWD, b"dirfd", 0))',
  'attempt("rename-in", lambda: os.rename(canary, "rename-in"))',
  // What stays allowed: links within the roots, and an O_TMPFILE given its name.
  'open("own", "w").write("own")',
  'attempt("own-link", lambda: os.link("own", "own-link"), False)',
  'os.mkdir("sub"); attempt("sub/own-link", lambda: follow("own", "sub/own-link"), False)',
  't = os.open(".", os.O_TMPFILE | os.O_WRONLY, 0o600); os.write(t, b"tmp")',
  'attempt("tmpfile", lambda: follow(f"/proc/self/fd/{t}", "tmpfile"), False)',
]);

function linkFixture() {
  const base = fs.realpathSync(tempDir('agent-exec-link-'));
  const outside = path.join(base, 'outside');
  const dir = path.join(base, 'root');
  fs.mkdirSync(outside);
  fs.mkdirSync(dir);
  const canary = path.join(outside, 'canary');
  const secret = path.join(outside, '.git-credentials');
  fs.writeFileSync(canary, 'ORIGINAL');
  fs.writeFileSync(secret, 'https://u:TOKEN@example.com', { mode: 0o600 });
  return { dir, outside, canary, secret, command: linkAttack(outside, canary, secret) };
}

function assertLinksHeld(output, fx) {
  for (const name of ['plain', 'credential', 'via-file-link', 'via-dir-link', 'proc-fd', 'dev-fd', 'empty-path', 'o-path', 'dirfd']) {
    assert.match(output, new RegExp(`^${name} refused 18$`, 'm'), `${name}: ${output}`);
    assert.equal(fs.existsSync(path.join(fx.dir, name)), false, `${name} was made`);
  }
  assert.match(output, /^rename-in refused (13|18)$/m, output);
  assert.doesNotMatch(output, /TOKEN|ORIGINAL/, 'a file outside the roots was read through a link');
  assert.equal(fs.readFileSync(fx.canary, 'utf8'), 'ORIGINAL');
  assert.equal(fs.readFileSync(fx.secret, 'utf8'), 'https://u:TOKEN@example.com');
  assert.match(output, /^own-link linked, read own$/m, output);
  assert.match(output, /^sub\/own-link linked, read own$/m, output);
  assert.match(output, /^tmpfile linked, read tmp$/m, output);
}

test('a link never gives a file from outside the roots their rights, however its source is named', when(noSandbox, noPython), async () => {
  const fx = linkFixture();
  const r = await run({ command: fx.command, cwd: fx.dir, sandbox: { writableRoots: [fx.dir] } });
  assertLinksHeld(r.output, fx);
  // The refusals are the supervisor's and recorded, naming the source.
  assert.ok(r.sandbox.denials.some((d) => d.operation === 'link' && d.path === fx.canary), JSON.stringify(r.sandbox.denials));
});

test('without a mount namespace too, a link of a host file into the roots is refused (EXDEV), not made', when(noSandbox, noPython), () => {
  const fx = linkFixture();
  const script = `
    const api = require(${JSON.stringify(path.join(__dirname, '..', 'js', 'index.js'))});
    api.exec({ command: ${JSON.stringify(fx.command)}, cwd: ${JSON.stringify(fx.dir)}, sandbox: { writableRoots: [${JSON.stringify(fx.dir)}] } })
      .then((r) => console.log(JSON.stringify({ output: r.output, binds: api.sandboxCapabilities().readOnlyBinds })), (e) => console.log(JSON.stringify({ error: e.message })));`;
  const out = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 60000, env: { ...process.env, AGENT_EXEC_NO_MOUNT_NAMESPACE: '1' } });
  const got = JSON.parse(out.stdout.trim().split('\n').pop() || 'null');
  assert.ok(got && got.output !== undefined, out.stdout + out.stderr);
  assert.equal(got.binds, false, 'the switch did not take the mount namespace away');
  assertLinksHeld(got.output, fx);
});

// The supervisor is a thread of the agent's process: every ptrace check on the agent passes for it.
// It followed `/proc/<agent>/fd/<n>` for a run that could not (Landlock's ptrace scope), and reopened
// the agent's pipes for writing: an unsandboxed session's stdin ran what the run wrote. Checked in every
// mode a host can have: with the run's own PID namespace, without one, and without a mount namespace.
function agentFdAttack(dir, canary) {
  return py([
    'import os, stat, sys',
    `agent = int(os.environ["AGENT_PID"]); canary = ${JSON.stringify(canary)}`,
    'opened = []',
    'for n in range(0, 200):',
    '    for link in (f"/proc/{agent}/fd/{n}", f"/proc/{agent}/task/{agent}/fd/{n}"):',
    '        try:',
    '            fd = os.open(link, os.O_WRONLY | os.O_NONBLOCK)',
    '        except OSError:',
    '            continue',
    '        opened.append(link)',
    '        try:',
    '            if stat.S_ISFIFO(os.fstat(fd).st_mode): os.write(fd, f"touch {canary}\\n".encode())',
    '        except OSError:',
    '            pass',
    'for link in (f"/proc/{agent}/cwd/x", f"/proc/{agent}/root/tmp/x"):',
    '    try:',
    '        os.open(link, os.O_WRONLY | os.O_CREAT); opened.append(link)',
    '    except OSError:',
    '        pass',
    'print("opened", len(opened), opened[:3])',
    // The run's own descriptors and processes stay reachable.
    'os.write(os.open("/proc/self/fd/1", os.O_WRONLY), b"own fd ok\\n")',
    'pid = os.fork()',
    'if pid == 0:',
    '    try:',
    '        os.write(os.open(f"/proc/{os.getppid()}/fd/1", os.O_WRONLY), b"parent fd ok\\n")',
    '    except OSError as e:',
    '        print("parent fd refused", e.errno, flush=True)',
    '    os._exit(0)',
    'os.waitpid(pid, 0)',
  ]);
}

for (const [mode, env] of [
  ['its own PID namespace', {}],
  ['no PID namespace', { AGENT_EXEC_NO_PID_NAMESPACE: '1' }],
  ['no mount namespace', { AGENT_EXEC_NO_MOUNT_NAMESPACE: '1' }],
]) {
  test(`a run cannot reopen the agent's descriptors through /proc (${mode}): an unsandboxed session's stdin runs nothing it wrote`, when(noSandbox, noPython), async () => {
    const dir = root();
    const canary = path.join(path.dirname(dir), `agent-fd-canary-${process.pid}-${Object.keys(env).join('') || 'ns'}`);
    const script = `
      const api = require(${JSON.stringify(path.join(__dirname, '..', 'js', 'index.js'))});
      (async () => {
        const shell = await api.exec({ command: 'bash', background: true, stdin: 'pipe', cwd: ${JSON.stringify(dir)}, scopeKey: 'agent-fd' });
        const r = await api.exec({ command: ${JSON.stringify(agentFdAttack(dir, canary))}, cwd: ${JSON.stringify(dir)}, env: { AGENT_PID: String(process.pid) }, sandbox: { writableRoots: [${JSON.stringify(dir)}] } });
        // What the shell was given is run by now if it was given anything: a line of the host's own after it.
        await api.writeStdin(shell.sessionId, 'echo host-line\\n', { scopeKey: 'agent-fd' }).catch(() => {});
        const deadline = Date.now() + 5000;
        let seen = '';
        while (Date.now() < deadline && !seen.includes('host-line')) {
          seen = (await api.pollSession(shell.sessionId, { scopeKey: 'agent-fd' })).output ?? '';
          await new Promise((res) => setTimeout(res, 20));
        }
        await api.killSession(shell.sessionId, { scopeKey: 'agent-fd' });
        console.log(JSON.stringify({ output: r.output, shell: seen }));
        process.exit(0);
      })().catch((e) => { console.log(JSON.stringify({ error: String(e) })); process.exit(1); });`;
    const out = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 60000, env: { ...process.env, ...env } });
    const got = JSON.parse(out.stdout.trim().split('\n').pop() || 'null');
    try {
      assert.ok(got && got.output !== undefined, out.stdout + out.stderr);
      assert.match(got.shell, /host-line/, 'the unsandboxed session never ran the host\'s own line');
      assert.match(got.output, /^opened 0 \[\]$/m, got.output);
      assert.match(got.output, /^own fd ok$/m, got.output);
      // In a PID namespace of the run's own, its other processes are its own (the kernel's rules);
      // without one they cannot be told from the host's, and are refused as the agent's are.
      if (mode === 'its own PID namespace' && caps.processNamespaces) assert.match(got.output, /^parent fd ok$/m, got.output);
      assert.equal(fs.existsSync(canary), false, 'the agent\'s session ran what the run wrote into its stdin');
    } finally {
      fs.rmSync(canary, { force: true });
    }
  });
}

// The supervisor's thread is in the host's mount namespace, where the kernel's own check (a mount
// point is not renamed or removed: EBUSY) sees only the host's mounts. A rename it made for a run
// detached the run's mount: a denyRead file (an empty file mounted over it) moved to a name nothing
// hid, and the next run read it.
test('a hidden file is not renamed or removed from under the mount that hides it, so a later run cannot read it', when(noSandbox), async () => {
  const dir = root();
  fs.writeFileSync(path.join(dir, '.env'), 'SECRET=hunter2\n');
  const sandbox = { writableRoots: [dir], denyRead: ['.env'] };
  const first = await run({ command: 'mv .env moved; mv -T .env other 2>&1; rm -f .env; ln -f .env linked; cat .env; echo done', cwd: dir, sandbox });
  assert.match(first.output, /done/);
  assert.equal(fs.readFileSync(path.join(dir, '.env'), 'utf8'), 'SECRET=hunter2\n', first.output);
  for (const name of ['moved', 'other', 'linked']) assert.ok(!fs.existsSync(path.join(dir, name)), `${name} was made: ${first.output}`);
  // The refusals are recorded.
  assert.ok(first.sandbox.denials.some((d) => d.operation === 'rename' && d.path === path.join(dir, '.env') && /mount point/.test(d.rule)), JSON.stringify(first.sandbox.denials));
  assert.ok(first.sandbox.denials.some((d) => d.operation === 'remove' && d.path === path.join(dir, '.env')), JSON.stringify(first.sandbox.denials));
  const second = await run({ command: 'cat moved other linked .env 2>/dev/null; echo end', cwd: dir, sandbox });
  assert.doesNotMatch(second.output, /hunter2/);
});

// Second round: the directory that holds a hidden file was moved whole; the mount moved with it in
// that run, but the next run hides names, and the new one was not among them.
test('a directory holding a hidden file is copied, not moved, so the file stays hidden at its name', when(noSandbox), async () => {
  const dir = root();
  fs.mkdirSync(path.join(dir, 'config/deep'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'config/deep/secret.json'), 'USER_SECRET\n');
  fs.writeFileSync(path.join(dir, 'config/plain.txt'), 'plain\n');
  const sandbox = { writableRoots: [dir], denyRead: ['config/deep/secret.json'] };
  const first = await run({ command: 'mv config cfg2; python3 -c "import os; os.rename(\'cfg2\', \'cfg3\') if os.path.exists(\'cfg2\') else os.rename(\'config\', \'cfg3\')" 2>&1; echo done', cwd: dir, sandbox });
  assert.match(first.output, /done/);
  assert.equal(fs.readFileSync(path.join(dir, 'config/deep/secret.json'), 'utf8'), 'USER_SECRET\n', first.output);
  const second = await run({ command: 'cat cfg2/deep/secret.json cfg3/deep/secret.json config/deep/secret.json 2>/dev/null; echo end', cwd: dir, sandbox });
  assert.doesNotMatch(second.output, /USER_SECRET/);
  assert.match(second.output, /end/);
  // The rest stays where it was (mv's copy stops at the file it may not read).
  assert.equal(fs.readFileSync(path.join(dir, 'config/plain.txt'), 'utf8'), 'plain\n', first.output);
  assert.ok(first.sandbox.denials.length === 0 || first.sandbox.denials.every((d) => d.operation !== 'rename' || /copied, not moved/.test(d.rule)), JSON.stringify(first.sandbox.denials));
});

// The host writes its session logs and makes its runs' temp dirs by name under its temp dir. With a
// root holding the temp dir, a run renamed them (with a mount namespace: from under the empty mount
// that covers them) or put a link in their place, and the host then wrote the next run's output
// wherever the link pointed, or another run read a concurrent run's temp files.
for (const [mode, env] of [['own mount namespace', {}], ['no mount namespace', { AGENT_EXEC_NO_MOUNT_NAMESPACE: '1' }]]) {
  test(`the host's own log and temp directories under a root are not the run's to move or replace (${mode})`, when(noSandbox), () => {
    const base = root();
    const tmp = path.join(base, 'tmp');
    const canary = path.join(base, 'canary');
    fs.mkdirSync(tmp);
    fs.mkdirSync(canary);
    fs.chmodSync(base, 0o755);
    fs.chmodSync(tmp, 0o1777);
    const uid = process.getuid();
    const logs = path.join(tmp, `agent-exec-${uid}`);
    const sandboxBase = path.join(tmp, `agent-exec-sandbox-${uid}`);
    const attack = [
      'touch "$TMPDIR/own-file" && echo own ok',
      `mv ${logs} ${tmp}/logs-moved`, `rm -rf ${logs}`, `ln -s ${canary} ${logs}`,
      `mv ${sandboxBase} ${tmp}/base-moved`, `ln -s ${canary} ${sandboxBase}/planted`,
      `touch ${logs}/planted.log`, 'echo attacked',
    ].map((c) => `${c} 2>/dev/null`).join('; ');
    const script = `
      const api = require(${JSON.stringify(path.join(__dirname, '..', 'js', 'index.js'))});
      (async () => {
        // A first run with output enough for a log, so the log directory exists before the attack.
        const warm = await api.exec({ command: 'seq 1 300000', cwd: ${JSON.stringify(tmp)}, sandbox: { writableRoots: [${JSON.stringify(tmp)}] } });
        const a = await api.exec({ command: ${JSON.stringify(attack)}, cwd: ${JSON.stringify(tmp)}, sandbox: { writableRoots: [${JSON.stringify(tmp)}] } });
        const after = await api.exec({ command: 'seq 1 300000', cwd: ${JSON.stringify(tmp)}, sandbox: { writableRoots: [${JSON.stringify(tmp)}] } });
        console.log(JSON.stringify({ warm: warm.outputFile, output: a.output, denials: a.sandbox.denials, log: after.outputFile }));
      })().catch((e) => console.log(JSON.stringify({ error: e.message })));`;
    const out = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 120000, env: { ...process.env, ...env, TMPDIR: tmp } });
    const got = JSON.parse(out.stdout.trim().split('\n').pop() || 'null');
    try {
      assert.ok(got && got.output !== undefined, out.stdout + out.stderr);
      assert.ok(got.warm && got.warm.startsWith(logs + path.sep), `the warm-up run's log ${got.warm} is not in ${logs}`);
      assert.match(got.output, /own ok/, 'the run\'s own temp dir stays its own');
      assert.deepEqual(fs.readdirSync(canary), [], `the host wrote through a planted link: ${got.output}`);
      for (const d of [logs, sandboxBase]) {
        const st = fs.lstatSync(d);
        assert.ok(st.isDirectory() && !st.isSymbolicLink(), `${d} was replaced`);
      }
      assert.ok(!fs.existsSync(path.join(tmp, 'logs-moved')) && !fs.existsSync(path.join(tmp, 'base-moved')), fs.readdirSync(tmp).join(' '));
      assert.ok(!fs.existsSync(path.join(logs, 'planted.log')), 'the run wrote into the session logs');
      assert.ok(got.log && got.log.startsWith(logs + path.sep), `the next log ${got.log} is not in ${logs}`);
    } finally {
      fs.rmSync(base, { recursive: true, force: true });
    }
  });
}
