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

const { native, killTracked, tempDir, run } = require('./helpers.js');

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
