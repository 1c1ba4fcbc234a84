'use strict';
// The supervisor judges a name as the run sees it. A run's mount namespace has a /dev, /dev/shm, /proc
// and hidden directories of its own, so a path can mean one file inside and another, or nothing, on the
// host. Each attack here goes through such a difference (a link in the run's private /dev/shm, a pid of
// the run's own PID namespace under /proc, a socket in a directory hidden from the run) and the test
// checks the host's side: no planted file, no connection reached the listener, and a denial recorded.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const { native, killTracked, tempDir, run } = require('./helpers.js');

test.after(killTracked);

const caps = native.sandboxCapabilities();
const noSandbox = !caps.enforceable && `this host cannot sandbox: ${caps.problems.join('; ')}`;
const noNamespaces = !caps.denyRead && 'this host cannot give a run a mount namespace (no private /dev/shm, /proc or hidden paths)';
const noPython = spawnSync('python3', ['-c', '1']).status !== 0 && 'python3 is not installed';
const when = (...reasons) => ({ skip: reasons.find(Boolean) || false });

/** A root holding a git repository (so it has protected paths: the run gets a mount namespace). */
function repoRoot() {
  const root = fs.realpathSync(tempDir('agent-exec-views-'));
  const git = spawnSync('git', ['init', '-q', root]);
  assert.equal(git.status, 0, String(git.stderr));
  return root;
}

/** The names the run planted on the host, of those it tried. */
function planted(root, names) {
  return names.filter((n) => fs.existsSync(path.join(root, n)));
}

test('a link in the run\'s private /dev/shm into a root reaches no protected name and no denyWrite match', when(noSandbox, noNamespaces), async () => {
  const root = repoRoot();
  fs.writeFileSync(path.join(root, 'key.pem'), 'original');
  const targets = ['.envrc', '.mcp.json', '.git/commondir', '.git/config.worktree', 'new.pem'];
  const r = await run({
    command: [
      'ln -s "$PWD" /dev/shm/L || exit 3',
      ...targets.map((t) => `{ echo planted > /dev/shm/L/${t}; } 2>/dev/null`),
      '{ echo changed > /dev/shm/L/key.pem; } 2>/dev/null',
      '{ mkdir /dev/shm/L/.claude; } 2>/dev/null',
      'echo done',
    ].join('; '),
    cwd: root,
    sandbox: { writableRoots: [root], denyWrite: ['**/*.pem'] },
  });
  assert.equal(r.exitCode, 0, r.output);
  assert.match(r.output, /done\n$/);
  assert.deepEqual(planted(root, [...targets, '.claude']), [], 'planted through /dev/shm');
  assert.equal(fs.readFileSync(path.join(root, 'key.pem'), 'utf8'), 'original');
  // Named as the files they are, not as the link's path.
  const refused = new Set(r.sandbox.denials.map((d) => d.path));
  for (const t of ['.envrc', '.git/commondir', 'new.pem', 'key.pem', '.claude']) {
    assert.ok(refused.has(path.join(root, t)), `${t}: no denial naming it (${[...refused].join(', ')})`);
  }
});

/** A pid no process of the host has, low enough for a run to reach by forking. */
function pidFreeOnTheHost() {
  for (let p = 300; p < 2000; p++) if (!fs.existsSync(`/proc/${p}`)) return p;
  return undefined;
}

test('/proc/<pid> of the run\'s own PID namespace means the run\'s process, whatever the host has at that pid', when(noSandbox, noNamespaces), async (t) => {
  const root = repoRoot();
  const free = pidFreeOnTheHost();
  if (!free) return t.skip('no free pid under 2000 on this host');
  const r = await run({
    // Fork until a sleeping child has pid `free` in the run's namespace (pids there count up from 1),
    // then write through its cwd and root; and through the shell's own pid.
    command: [
      `while :; do sleep 30 & p=$!; [ "$p" -ge ${free} ] && break; kill $p; done`,
      `[ "$p" = ${free} ] || echo "reached $p"`,
      '{ echo planted > /proc/$p/cwd/.envrc; } 2>/dev/null',
      '{ echo planted > /proc/$p/root$PWD/.mcp.json; } 2>/dev/null',
      '{ echo planted > /proc/$$/cwd/.git/commondir; } 2>/dev/null',
      'kill $p; echo done',
    ].join('; '),
    cwd: root,
    sandbox: { writableRoots: [root] },
  });
  assert.match(r.output, /done\n$/, r.output);
  if (!r.sandbox.mechanisms.some((m) => /PID, IPC and UTS namespaces/.test(m))) return t.skip('no PID namespace for the run here');
  assert.deepEqual(planted(root, ['.envrc', '.mcp.json', '.git/commondir']), [], 'planted through /proc/<pid>');
  const refused = new Set(r.sandbox.denials.map((d) => d.path));
  for (const n of ['.envrc', '.mcp.json', '.git/commondir']) assert.ok(refused.has(path.join(root, n)), `${n}: not named (${[...refused].join(', ')})`);
});

test('a socket in a directory hidden from the run cannot be connected to, though it lies in a root', when(noSandbox, noNamespaces, noPython), async (t) => {
  const home = fs.realpathSync(tempDir('agent-exec-views-home-'));
  fs.mkdirSync(path.join(home, '.ssh'), { mode: 0o700 });
  fs.mkdirSync(path.join(home, 'project'));
  const sock = path.join(home, '.ssh', 'control.sock');
  let reached = 0;
  const server = net.createServer((c) => { reached++; c.end('SECRET'); });
  await new Promise((resolve) => server.listen(sock, resolve));
  t.after(() => server.close());
  const r = await run({
    command: `python3 -c "
import socket, sys
s = socket.socket(socket.AF_UNIX)
try:
    s.connect('${sock}'); print('connected', s.recv(64))
except OSError as e:
    print('refused', e.errno)
"`,
    cwd: path.join(home, 'project'),
    env: { HOME: home },
    sandbox: { writableRoots: [home] },
  });
  if (!r.sandbox.mechanisms.some((m) => /credential or denyRead paths? hidden/.test(m) && m.includes('.ssh'))) {
    return t.skip(`~/.ssh is not hidden for this run: ${r.sandbox.mechanisms.join('; ')}`);
  }
  assert.match(r.output, /^refused \d+/, r.output);
  assert.equal(reached, 0, 'the host listener was reached from inside');
  // Unsandboxed, the same connect goes through (the test's listener is real).
  const plain = await run({ command: `python3 -c "import socket; s=socket.socket(socket.AF_UNIX); s.connect('${sock}'); print(s.recv(64))"`, cwd: home });
  assert.match(plain.output, /SECRET/);
});

test('binding a Unix socket makes no protected name and no .git', when(noSandbox, noPython), async () => {
  const root = repoRoot();
  fs.mkdirSync(path.join(root, 'sub'));
  const names = ['.envrc', '.mcp.json', '.git/commondir', 'sub/.git'];
  const r = await run({
    command: `python3 -c "
import socket
for name in [${names.map((n) => `'${n}'`).join(', ')}]:
    s = socket.socket(socket.AF_UNIX)
    try:
        s.bind(name); print('bound', name)
    except OSError as e:
        print('refused', name, e.errno)
"`,
    cwd: root,
    sandbox: { writableRoots: [root] },
  });
  assert.equal(r.exitCode, 0, r.output);
  for (const n of names) assert.match(r.output, new RegExp(`^refused ${n.replace('.', '\\.')} \\d+$`, 'm'), r.output);
  assert.deepEqual(planted(root, names), []);
  const binds = r.sandbox.denials.filter((d) => d.operation === 'bind').map((d) => d.path);
  for (const n of names) assert.ok(binds.includes(path.join(root, n)), `${n}: no bind denial (${binds.join(', ')})`);
});

test('renameat2 cannot swap a .git directory for a file, nor leave a whiteout named .git', when(noSandbox, noPython), async () => {
  // Not a repository: a run may make its own repositories outside the host's work trees.
  const root = fs.realpathSync(tempDir('agent-exec-views-'));
  const r = await run({
    command: `mkdir -p sub/.git && echo 'gitdir: /elsewhere' > sub/pointer && python3 -c "
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
rc = libc.renameat2(AT_FDCWD, b'sub/pointer', AT_FDCWD, b'sub/.git', RENAME_EXCHANGE)
print('rc', rc, ctypes.get_errno())
"`,
    cwd: root,
    sandbox: { writableRoots: [root] },
  });
  assert.match(r.output, /^rc -1 1$/m, r.output);
  assert.ok(fs.statSync(path.join(root, 'sub', '.git')).isDirectory(), 'sub/.git was swapped for a file');
  assert.ok(r.sandbox.denials.some((d) => d.path === path.join(root, 'sub', '.git') || d.path === path.join(root, 'sub', 'pointer')), JSON.stringify(r.sandbox.denials));
});

/** Git as the host runs it, with a clean environment and an identity. */
function hostGit(cwd, ...args) {
  return spawnSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd, encoding: 'utf8', env: { PATH: process.env.PATH, HOME: process.env.HOME } });
}

test('the host\'s repositories deeper in a root keep their hooks and config, and no repository is made inside one for the host\'s git to enter', when(noSandbox), async () => {
  const root = repoRoot();
  const canary = path.join(fs.realpathSync(tempDir('agent-exec-views-canary-')), 'ran');
  assert.equal(hostGit(root, 'commit', '-q', '--allow-empty', '-m', 'i').status, 0);
  const inner = path.join(root, 'vendor', 'lib');
  fs.mkdirSync(inner, { recursive: true });
  assert.equal(hostGit(inner, 'init', '-q').status, 0);
  assert.equal(hostGit(inner, 'commit', '-q', '--allow-empty', '-m', 'i').status, 0);
  const hook = `#!/bin/sh\\necho hook >> ${canary}\\n`;
  const r = await run({
    command: [
      // The nested repository's metadata, by every spelling.
      `{ printf '${hook}' > vendor/lib/.git/hooks/post-checkout && chmod +x vendor/lib/.git/hooks/post-checkout; } 2>/dev/null`,
      `{ printf '[core]\\n\\tfsmonitor = echo fsmonitor >> ${canary}\\n' >> vendor/lib/.git/config; } 2>/dev/null`,
      '{ mkdir -p vendor/lib/.git/info && echo x > vendor/lib/.git/info/attributes; } 2>/dev/null',
      '{ echo /elsewhere > vendor/lib/.git/commondir; } 2>/dev/null',
      '{ mv vendor/lib/.git vendor/lib/moved; } 2>/dev/null',
      '{ ln -s vendor/lib/.git/config cfg-link && echo x >> cfg-link; } 2>/dev/null',
      // A repository of the run's own inside the host's work tree, and a gitlink to it.
      `{ mkdir evil && git -C evil init -q && git -C evil config core.fsmonitor 'echo gitlink >> ${canary}; false'; } 2>/dev/null`,
      '{ git update-index --add --cacheinfo 160000,4b825dc642cb6eb9a060e54bf8d69288fbee4904,evil; } 2>/dev/null',
      '{ mkdir -p deep/er && git init -q deep/er; } 2>/dev/null',
      // Outside the host's repositories, the run's own repository works as before.
      'git init -q "$TMPDIR/own" && git -C "$TMPDIR/own" -c user.name=r -c user.email=r@r commit -q --allow-empty -m own && echo own-repo-ok',
      'echo done',
    ].join('; '),
    cwd: root,
    sandbox: { writableRoots: [root] },
  });
  assert.match(r.output, /own-repo-ok\ndone\n$/, r.output);
  for (const rel of ['vendor/lib/.git/hooks/post-checkout', 'vendor/lib/.git/info/attributes', 'vendor/lib/.git/commondir', 'vendor/lib/moved', 'evil/.git', 'deep/er/.git']) {
    assert.equal(fs.existsSync(path.join(root, rel)), false, `${rel} was made`);
  }
  assert.doesNotMatch(fs.readFileSync(path.join(inner, '.git', 'config'), 'utf8'), /fsmonitor/);
  // The host's git, in both repositories, runs nothing the command planted.
  hostGit(root, 'status');
  hostGit(inner, 'status');
  hostGit(inner, 'checkout', '-q', '-b', 'topic');
  assert.equal(fs.existsSync(canary), false, fs.existsSync(canary) ? fs.readFileSync(canary, 'utf8') : '');
  const refused = r.sandbox.denials.map((d) => `${d.path} ${d.rule}`).join('\n');
  assert.match(refused, /vendor\/lib\/\.git\/hooks\/post-checkout .*host's repository/);
  assert.match(refused, /evil\/\.git .*host's work tree/);
});

test('a descriptor on a nested host repository\'s config cannot make it writable to others, nor its hook executable', when(noSandbox, noPython), async () => {
  const root = fs.realpathSync(tempDir('agent-exec-views-fchmod-'));
  const inner = path.join(root, 'vendor', 'lib');
  fs.mkdirSync(inner, { recursive: true });
  assert.equal(hostGit(inner, 'init', '-q').status, 0);
  const config = path.join(inner, '.git', 'config');
  const hook = path.join(inner, '.git', 'hooks', 'pre-push');
  fs.writeFileSync(hook, '#!/bin/sh\n', { mode: 0o644 });
  const before = { config: fs.statSync(config).mode & 0o7777, hook: fs.statSync(hook).mode & 0o7777 };
  const script = [
    'import os',
    'for p, m in [("vendor/lib/.git/config", 0o666), ("vendor/lib/.git/config", 0o664), ("vendor/lib/.git/hooks/pre-push", 0o755)]:',
    '    fd = os.open(p, os.O_RDONLY)',
    '    try:',
    '        os.fchmod(fd, m); print("changed", p, oct(m))',
    '    except OSError as e:',
    '        print("refused", p, oct(m), e.errno)',
  ].join('\n');
  const r = await run({ command: `python3 -c '${script}'`, cwd: root, sandbox: { writableRoots: [root] } });
  assert.doesNotMatch(r.output, /changed/, r.output);
  assert.equal(fs.statSync(config).mode & 0o7777, before.config);
  assert.equal(fs.statSync(hook).mode & 0o7777, before.hook);
  const refused = r.sandbox.denials.filter((d) => d.operation === 'chmod').map((d) => d.path);
  assert.ok(refused.includes(config) && refused.includes(hook), JSON.stringify(r.sandbox.denials));
});

test('a protected file cannot be hard-linked elsewhere to be written through its new name', when(noSandbox), async () => {
  const root = repoRoot();
  fs.writeFileSync(path.join(root, 'key.pem'), 'original');
  const r = await run({
    command: '{ ln key.pem copy && echo changed > copy; } 2>/dev/null; { ln .git/config cfg && echo x >> cfg; } 2>/dev/null; echo done',
    cwd: root,
    sandbox: { writableRoots: [root], denyWrite: ['*.pem'] },
  });
  assert.match(r.output, /done\n$/);
  assert.equal(fs.readFileSync(path.join(root, 'key.pem'), 'utf8'), 'original');
  assert.doesNotMatch(fs.readFileSync(path.join(root, '.git', 'config'), 'utf8'), /^x$/m);
  assert.ok(r.sandbox.denials.some((d) => d.operation === 'link' && d.path === path.join(root, 'key.pem')), JSON.stringify(r.sandbox.denials));
});

test('round two: /proc links, RESOLVE_IN_ROOT, fchmod, bare and gitdir repositories, sockets and moves reach no host repository\'s metadata', when(noSandbox, noPython), async () => {
  const root = fs.realpathSync(tempDir('agent-exec-views-round2-'));
  const canary = path.join(fs.realpathSync(tempDir('agent-exec-views-canary-')), 'ran');
  // The host's: a repository with a nested one whose pre-commit hook it disabled, a bare repository.
  const host = path.join(root, 'hostrepo');
  fs.mkdirSync(path.join(host, 'vendor', 'lib'), { recursive: true });
  assert.equal(hostGit(host, 'init', '-q').status, 0);
  assert.equal(hostGit(path.join(host, 'vendor', 'lib'), 'init', '-q').status, 0);
  const hook = path.join(host, 'vendor', 'lib', '.git', 'hooks', 'pre-commit');
  fs.writeFileSync(hook, `#!/bin/sh\necho pre-commit >> ${canary}\n`, { mode: 0o644 });
  assert.equal(hostGit(root, 'init', '-q', '--bare', 'remote.git').status, 0);
  const P = `/proc/net/../../..${root}`;
  const r = await run({
    command: [
      `{ echo planted > ${P}/.envrc; } 2>/dev/null`,
      `{ echo x > ${P}/hostrepo/vendor/lib/.git/hooks/post-checkout; } 2>/dev/null`,
      // openat2 with RESOLVE_IN_ROOT, the dirfd the nested work tree: the kernel would write its hooks.
      `python3 -c "
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
class How(ctypes.Structure):
    _fields_ = [('flags', ctypes.c_uint64), ('mode', ctypes.c_uint64), ('resolve', ctypes.c_uint64)]
d = os.open('hostrepo/vendor/lib', os.O_PATH)
how = How(os.O_WRONLY | os.O_CREAT, 0o755, 0x10)
fd = libc.syscall(437, d, b'/.git/hooks/post-merge', ctypes.byref(how), 24)
print('openat2', fd, ctypes.get_errno())
f = os.open('hostrepo/vendor/lib/.git/hooks/pre-commit', os.O_RDONLY)
try:
    os.fchmod(f, 0o755); print('fchmod ok')
except OSError as e:
    print('fchmod', e.errno)
import socket
s = socket.socket(socket.AF_UNIX)
try:
    s.bind('hostrepo/vendor/lib/.git/hooks/sock'); print('bind ok')
except OSError as e:
    print('bind', e.errno)
"`,
      '{ echo x > remote.git/hooks/pre-receive; } 2>/dev/null',
      // A repository made outside the host's work tree, then moved into it.
      'git init -q mine 2>/dev/null; { mv mine hostrepo/sub; } 2>/dev/null',
      'echo done',
    ].join('; '),
    cwd: root,
    sandbox: { writableRoots: [root] },
  });
  assert.match(r.output, /done\n$/, r.output);
  assert.match(r.output, /^openat2 -1 1$/m, r.output);
  assert.match(r.output, /^fchmod 1$/m, r.output);
  assert.match(r.output, /^bind \d+$/m, r.output);
  for (const rel of ['.envrc', 'hostrepo/vendor/lib/.git/hooks/post-checkout', 'hostrepo/vendor/lib/.git/hooks/post-merge', 'hostrepo/vendor/lib/.git/hooks/sock', 'remote.git/hooks/pre-receive', 'hostrepo/sub/.git']) {
    assert.equal(fs.existsSync(path.join(root, rel)), false, `${rel} was made`);
  }
  assert.equal(fs.statSync(hook).mode & 0o777, 0o644, 'the disabled hook was made executable');
  // The host's commit in the nested repository runs no hook.
  fs.writeFileSync(path.join(host, 'vendor', 'lib', 'f'), 'x');
  hostGit(path.join(host, 'vendor', 'lib'), 'add', 'f');
  hostGit(path.join(host, 'vendor', 'lib'), 'commit', '-q', '-m', 'x');
  assert.equal(fs.existsSync(canary), false, 'a hook ran');
});

test('a package of a monorepo cannot make a repository the host\'s git would find first', when(noSandbox), async () => {
  const mono = fs.realpathSync(tempDir('agent-exec-views-mono-'));
  const canary = path.join(fs.realpathSync(tempDir('agent-exec-views-canary-')), 'ran');
  assert.equal(hostGit(mono, 'init', '-q').status, 0);
  const pkg = path.join(mono, 'packages', 'foo');
  fs.mkdirSync(pkg, { recursive: true });
  const r = await run({
    command: `{ git init -q . && git config core.fsmonitor 'echo fsmonitor >> ${canary}; false'; } 2>/dev/null; echo done`,
    cwd: pkg,
    sandbox: { writableRoots: [pkg] },
  });
  assert.match(r.output, /done\n$/);
  assert.equal(fs.existsSync(path.join(pkg, '.git')), false);
  hostGit(pkg, 'status');
  assert.equal(fs.existsSync(canary), false, 'the host\'s git ran the package\'s fsmonitor');
  assert.ok(r.sandbox.denials.some((d) => d.path === path.join(pkg, '.git') && /host's work tree/.test(d.rule)), JSON.stringify(r.sandbox.denials));
});

test('no repository is made in a directory of the host\'s that is no work tree: the host\'s git run below it would obey it', when(noSandbox), async () => {
  // Outside round six: a root that is no work tree (or $HOME) took `git init .`, and the host's next
  // `git status` in a directory below ran the run's core.fsmonitor. git finds a repository walking up.
  const root = fs.realpathSync(tempDir('agent-exec-views-plain-'));
  const canary = path.join(fs.realpathSync(tempDir('agent-exec-views-canary-')), 'ran');
  fs.mkdirSync(path.join(root, 'docs'));
  fs.mkdirSync(path.join(root, 'bare'));
  const fsmonitor = `echo fsmonitor >> ${canary}; false`;
  const r = await run({
    command: [
      `{ git init -q . && git config core.fsmonitor '${fsmonitor}'; } 2>/dev/null; echo "init:$?"`,
      // A repository made where that is allowed, moved into the host's directory.
      `{ git init -q mine && git -C mine config core.fsmonitor '${fsmonitor}' && mv mine/.git .git; } 2>/dev/null; echo "moved:$?"`,
      // A bare layout, its config first (before the directory is a repository by its content).
      `printf '[core]\\n\\tbare = false\\n\\tworktree = ..\\n\\tfsmonitor = "${fsmonitor}"\\n' > bare/config`,
      '{ mkdir -p bare/objects bare/refs && echo "ref: refs/heads/main" > bare/HEAD; } 2>/dev/null; echo "head:$?"',
      // Where a repository is the run's own: a directory it makes, and its temp dir.
      'mkdir app && git -C app init -q && git -C app -c user.name=r -c user.email=r@r commit -q --allow-empty -m a && echo app-ok',
      'cd "$TMPDIR" && git init -q && echo tmp-ok',
    ].join('; '),
    cwd: root,
    sandbox: { writableRoots: [root] },
  });
  assert.match(r.output, /init:[1-9]/, r.output);
  assert.match(r.output, /moved:[1-9]/, r.output);
  assert.match(r.output, /head:[1-9]/, r.output);
  assert.match(r.output, /app-ok\ntmp-ok\n$/, r.output);
  assert.equal(fs.existsSync(path.join(root, '.git')), false, 'a .git was made at the root');
  assert.equal(fs.existsSync(path.join(root, 'bare', 'HEAD')), false, 'a bare layout was completed');
  for (const dir of [root, path.join(root, 'docs'), path.join(root, 'bare')]) hostGit(dir, 'status');
  assert.equal(fs.existsSync(canary), false, 'the host\'s git obeyed a repository the run made in the host\'s directory');
  const refused = r.sandbox.denials.map((d) => `${d.path} ${d.rule}`).join('\n');
  assert.match(refused, new RegExp(`${root}/\\.git .*a directory of the host's`), refused);
  assert.match(refused, new RegExp(`${root}/bare/HEAD .*a directory of the host's`), refused);
});

test('below a root that is above the projects, each work tree of the host\'s keeps its editor, agent and hook configs; no other VCS repository is made in the host\'s directories', when(noSandbox), async () => {
  // Outside round seven: with the root at ~/code, ~/code/app/.vscode/tasks.json and .claude/ were
  // writable (only the root's own top was protected).
  const root = fs.realpathSync(tempDir('agent-exec-views-above-'));
  const app = path.join(root, 'app');
  fs.mkdirSync(path.join(app, '.vscode'), { recursive: true });
  assert.equal(hostGit(app, 'init', '-q').status, 0);
  fs.writeFileSync(path.join(app, '.vscode', 'tasks.json'), '{}');
  fs.mkdirSync(path.join(root, 'docs'));
  const r = await run({
    command: [
      '{ echo planted > app/.vscode/tasks.json; } 2>/dev/null',
      '{ mkdir -p app/.claude && echo planted > app/.claude/settings.json; } 2>/dev/null',
      '{ echo planted > app/.envrc; } 2>/dev/null',
      '{ ln -s /tmp app/.hg; } 2>/dev/null',
      '{ mkdir -p docs/.jj/repo; } 2>/dev/null; { mkdir docs/.sl; } 2>/dev/null',
      // Deeper in the work tree, they are the project's files.
      'mkdir -p app/src/.vscode && echo ok > app/src/.vscode/x && echo deeper-ok',
    ].join('; '),
    cwd: root,
    sandbox: { writableRoots: [root] },
  });
  assert.match(r.output, /deeper-ok\n$/, r.output);
  assert.equal(fs.readFileSync(path.join(app, '.vscode', 'tasks.json'), 'utf8'), '{}');
  assert.deepEqual(planted(root, ['app/.claude/settings.json', 'app/.envrc', 'app/.hg', 'docs/.jj', 'docs/.sl']), []);
  const refused = r.sandbox.denials.map((d) => `${d.path} ${d.rule}`).join('\n');
  assert.match(refused, /app\/\.hg .*(top of the host's work tree|a directory of the host's)/, refused);
  for (const rel of ['app/.vscode/tasks.json', 'app/.envrc', 'app/.claude']) {
    assert.match(refused, new RegExp(`${path.join(root, rel).replace(/\./g, '\\.')} .*top of the host's work tree`), refused);
  }
  assert.match(refused, /docs\/\.jj .*a directory of the host's/, refused);
});

test('nothing but regular files and directories is put in the host\'s git directory: the host\'s git writes there by name and would follow a link out of the roots', when(noSandbox, noPython), async () => {
  // Outside round seven: links at .git/COMMIT_EDITMSG, FETCH_HEAD and logs/* made the host's next
  // git commit, fetch and stash write outside the roots (a reflog linked to a shell start-up file
  // appended the run's commit subject to it).
  const root = repoRoot();
  assert.equal(hostGit(root, 'commit', '-q', '--allow-empty', '-m', 'base').status, 0);
  const out = fs.realpathSync(tempDir('agent-exec-views-out-'));
  const victims = ['v0', 'v1', 'v2', 'v3', 'v4', 'v5'].map((v) => path.join(out, v));
  for (const v of victims) fs.writeFileSync(v, 'original\n');
  const [v0, v1, v2, v3, v4, v5] = victims;
  const r = await run({
    command: [
      `{ ln -sf ${v0} .git/COMMIT_EDITMSG; } 2>/dev/null`,
      `{ ln -sf ${v1} .git/logs/HEAD; } 2>/dev/null`,
      `{ ln -s ${v2} l2 && mv l2 .git/FETCH_HEAD; } 2>/dev/null`,
      `{ mkdir -p d/refs && ln -s ${v3} d/refs/stash && rm -rf .git/logs/refs && mv d/refs .git/logs/refs; } 2>/dev/null`,
      `python3 -c 'import os; os.symlink("${v4}", "l4"); os.link("l4", ".git/ORIG_HEAD", follow_symlinks=False)' 2>/dev/null`,
      '{ mkfifo .git/MERGE_MSG; } 2>/dev/null',
      `{ ln -s ${v5} .git/objects/info/alternates2; } 2>/dev/null`,
      // The run's own git still works in the host's repository (its lock files renamed into place).
      'git -c user.name=r -c user.email=r@r commit -q --allow-empty -m inside && echo x > f && git add f && git -c user.name=r -c user.email=r@r commit -qm f && echo commit-ok',
    ].join('; '),
    cwd: root,
    sandbox: { writableRoots: [root] },
  });
  assert.match(r.output, /commit-ok\n$/, r.output);
  for (const rel of ['COMMIT_EDITMSG', 'logs/HEAD', 'FETCH_HEAD', 'ORIG_HEAD', 'MERGE_MSG', 'logs/refs/stash']) {
    const p = path.join(root, '.git', rel);
    const st = fs.lstatSync(p, { throwIfNoEntry: false });
    assert.ok(!st || st.isFile(), `${rel} is a ${st && (st.isSymbolicLink() ? 'link' : 'special file')}`);
  }
  // The host's git, afterwards: every victim outside the roots is as it was.
  assert.equal(hostGit(root, 'commit', '-q', '--allow-empty', '-m', 'host commit').status, 0);
  fs.writeFileSync(path.join(root, 'f'), 'changed\n');
  hostGit(root, 'stash', '-q');
  for (const v of victims) assert.equal(fs.readFileSync(v, 'utf8'), 'original\n', `${v} was written through a link`);
  const refused = r.sandbox.denials.map((d) => `${d.path} ${d.rule}`).join('\n');
  assert.match(refused, /\.git\/COMMIT_EDITMSG a symbolic link inside the host's git directory/, refused);
  assert.match(refused, /\.git\/FETCH_HEAD a directory or special file moved in/, refused);
  assert.match(refused, /l4 a link to what is no regular file, as .*\.git\/ORIG_HEAD, inside the host's git directory/, refused);
  assert.match(refused, /\.git\/MERGE_MSG a FIFO, socket or device node/, refused);
});

test('no repository takes the place of a directory of the host\'s: removed, moved away, replaced or exchanged, its path stays the host\'s', when(noSandbox, noPython), async () => {
  // Outside round seven: `mv src src.old; mv mine src` (mine/.git configured) in a root that is no
  // work tree ran the run's core.fsmonitor in the host's next `git status` in src.
  const root = fs.realpathSync(tempDir('agent-exec-views-vacated-'));
  const canary = path.join(fs.realpathSync(tempDir('agent-exec-views-canary-')), 'ran');
  for (const d of ['src', 'lib', 'app', 'web']) {
    fs.mkdirSync(path.join(root, d, 'sub'), { recursive: true });
    fs.writeFileSync(path.join(root, d, 'f'), 'host\n');
  }
  fs.rmSync(path.join(root, 'web', 'sub'), { recursive: true });
  fs.rmSync(path.join(root, 'web', 'f'));
  const mine = (dir) => `git init -q ${dir} && git -C ${dir} config core.fsmonitor 'echo ${dir} >> ${canary}; false'`;
  const r = await run({
    command: [
      `{ ${mine('m1')} && mv src src.old && mv m1 src; } 2>/dev/null; echo "moved:$(test -d src/.git && echo repo || echo none)"`,
      `{ rm -rf lib && mkdir lib && ${mine('lib')}; } 2>/dev/null; echo "remade:$(test -d lib/.git && echo repo || echo none)"`,
      `{ ${mine('m3')}; } 2>/dev/null; python3 -c 'import ctypes; print("exchange:%d" % ctypes.CDLL(None).renameat2(-100, b"app", -100, b"m3", 2))'`,
      // An empty directory of the host's replaced by a rename.
      `{ ${mine('m4')}; } 2>/dev/null; python3 -c 'import ctypes; print("replace:%d" % ctypes.CDLL(None).rename(b"m4", b"web"))'`,
      // Building in place of what a run removed still works, and so does a repository elsewhere.
      'rm -rf src.old && mkdir src.old && echo y > src.old/y && echo rebuilt',
      'mkdir fresh && git init -q fresh/repo && echo fresh-ok',
    ].join('; '),
    cwd: root,
    sandbox: { writableRoots: [root] },
  });
  assert.match(r.output, /moved:none\n/, r.output);
  assert.match(r.output, /remade:none\n/, r.output);
  assert.match(r.output, /exchange:-1\n/, r.output);
  assert.match(r.output, /replace:-1\n/, r.output);
  assert.match(r.output, /rebuilt\nfresh-ok\n$/, r.output);
  for (const d of ['src', 'lib', 'app', 'web']) {
    assert.equal(fs.existsSync(path.join(root, d, '.git')), false, `${d}/.git`);
    hostGit(path.join(root, d), 'status');
    if (fs.existsSync(path.join(root, d, 'sub'))) hostGit(path.join(root, d, 'sub'), 'status');
  }
  assert.equal(fs.existsSync(canary), false, fs.existsSync(canary) ? fs.readFileSync(canary, 'utf8') : '');
  const refused = r.sandbox.denials.map((d) => `${d.path} ${d.rule}`).join('\n');
  assert.match(refused, /where the host's directory .*src was until a run removed it or moved it away/, refused);
  assert.match(refused, /where the host's directory .*lib was/, refused);
});

test('the index a run puts in the host\'s git directory is read: no entry git would write outside the work tree or into .git, no cache-tree the entries do not agree with', when(noSandbox, noPython), async () => {
  // Outside round eight: entries `.git/hooks/pre-commit` and `../outside/pwn` had the host's
  // `git restore .` write a hook and a file outside the roots; a cache-tree pointing at another tree
  // put content into the host's next commit that status and diff never showed.
  const root = repoRoot();
  fs.mkdirSync(path.join(root, 'lib'));
  fs.writeFileSync(path.join(root, 'lib', 'a'), 'good\n');
  fs.writeFileSync(path.join(root, 'r'), 'r\n');
  assert.equal(hostGit(root, 'add', '.').status, 0);
  assert.equal(hostGit(root, 'commit', '-qm', 'base').status, 0);
  const worktree = path.join(fs.realpathSync(tempDir('agent-exec-views-wt-')), 'wt');
  assert.equal(hostGit(root, 'worktree', 'add', '-q', worktree).status, 0);
  const outside = path.join(fs.realpathSync(tempDir('agent-exec-views-outside-')), 'pwn');
  const canary = path.join(path.dirname(outside), 'ran');
  const rel = path.relative(root, outside);
  const padded = '-'.repeat(rel.length - 2);
  const put = [
    // Write `data` as the index through its lock file, as git does (checksum recomputed).
    'import hashlib, os, subprocess, sys',
    'def put(data, how="lock"):',
    '    body = data[:-20]',
    '    data = body + hashlib.sha1(body).digest()',
    '    if how == "lock":',
    '        open(".git/index.lock", "wb").write(data)',
    '        try:',
    '            os.rename(".git/index.lock", ".git/index")',
    '        finally:',
    '            os.path.exists(".git/index.lock") and os.unlink(".git/index.lock")',
    '    else:',
    '        open(".git/index", "r+b").write(data)',
    'def git(*a):',
    '    done = subprocess.run(["git", "-c", "user.name=r", "-c", "user.email=r@r", *a], capture_output=True, text=True)',
    '    if done.returncode != 0:',
    '        print("git", a[0], "failed:", done.stderr.strip().replace("\\n", " | "))',
    '    return done.stdout.strip()',
  ];
  const r = await run({
    command: `python3 - <<'PY'\n${[
      ...put,
      `hook = subprocess.run(["git", "hash-object", "-w", "--stdin"], input="#!/bin/sh\\ntouch ${canary}\\n", capture_output=True, text=True).stdout.strip()`,
      'git("update-index", "--add", "--cacheinfo", "100755," + hook + ",-git/hooks/pre-commit")',
      `git("update-index", "--add", "--cacheinfo", "100644," + hook + ",${padded}/x")`,
      'base = open(".git/index", "rb").read()',
      `crafted = base.replace(b"-git/hooks/", b".git/hooks/").replace(b"${padded}/x", b"${rel}")`,
      'for how in ("lock", "in place"):',
      '    try:',
      '        put(crafted, how)',
      '        print("put", how)',
      '    except OSError as e:',
      '        print("refused", how, e.errno)',
      'git("reset", "-q")',
      // The cache-tree: a tree with lib/a evil read in, then the entry's blob set back to good.
      'good = git("rev-parse", "HEAD:lib/a")',
      'evil = subprocess.run(["git", "hash-object", "-w", "--stdin"], input="evil\\n", capture_output=True, text=True).stdout.strip()',
      'env = dict(os.environ, GIT_INDEX_FILE=os.environ["TMPDIR"] + "/i")',
      'subprocess.run(["git", "read-tree", "HEAD"], env=env)',
      'subprocess.run(["git", "update-index", "--cacheinfo", "100644," + evil + ",lib/a"], env=env)',
      'tree = subprocess.run(["git", "write-tree"], env=env, capture_output=True, text=True).stdout.strip()',
      'git("read-tree", tree)',
      'data = open(".git/index", "rb").read()',
      'put(data.replace(bytes.fromhex(evil), bytes.fromhex(good)))',
      'print("tree", b"TREE" in open(".git/index", "rb").read())',
      // Outside round nine: a name whose length field says less than its NUL (git takes the
      // field: `sub/.gitX` with a length of 8 is `sub/.git` to its checkout).
      'git("update-index", "--add", "--cacheinfo", "100644," + hook + ",sub/.gitX")',
      'data = bytearray(open(".git/index", "rb").read())',
      'at = data.index(b"sub/.gitX\\0")',
      'data[at - 1] = 8',
      'try:',
      '    put(bytes(data)); print("put short")',
      'except OSError as e:',
      '    print("refused short", e.errno)',
      'git("reset", "-q")',
      // Outside round ten: entries laying out a repository (HEAD, config, objects, refs) in the
      // work tree, which the host's `git restore .` would check out.
      'cfg = subprocess.run(["git", "hash-object", "-w", "--stdin"], input="[core]\\n\\tpager = touch ' + canary + '\\n", capture_output=True, text=True).stdout.strip()',
      'git("update-index", "--add", "--cacheinfo", "100644," + hook + ",tools/HEAD", "--cacheinfo", "100644," + cfg + ",tools/config", "--cacheinfo", "100644," + hook + ",tools/refs/k", "--cacheinfo", "100644," + hook + ",tools/objects/k")',
      'print("layout", "tools/HEAD" in git("ls-files"))',
      // A worktree's index written in place with its HEAD moved aside.
      'os.rename(".git/worktrees/wt/HEAD", ".git/worktrees/wt/HEAD.x")',
      'try:',
      '    open(".git/worktrees/wt/index", "wb").write(b"x"); print("worktree index written")',
      'except OSError as e:',
      '    print("worktree index refused", e.errno)',
      'os.rename(".git/worktrees/wt/HEAD.x", ".git/worktrees/wt/HEAD")',
      // The legacy remote files.
      'try:',
      '    os.makedirs(".git/remotes", exist_ok=True); open(".git/remotes/upstream", "w").write("URL: /tmp\\n"); print("remotes written")',
      'except OSError:',
      '    print("remotes refused")',
      // The run's own git still works in the repository.
      'open("r", "a").write("more\\n"); git("add", "r"); git("commit", "-qm", "run"); print("commit", git("log", "-1", "--format=%s"))',
    ].join('\n')}\nPY`,
    cwd: root,
    sandbox: { writableRoots: [root] },
  });
  assert.match(r.output, /refused lock 1\nrefused in place 1\n/, r.output);
  assert.match(r.output, /tree False\n/, r.output);
  assert.match(r.output, /refused short 1\n/, r.output);
  assert.match(r.output, /worktree index refused 1\n/, r.output);
  assert.match(r.output, /layout False\n/, r.output);
  assert.match(r.output, /remotes refused\n/, r.output);
  assert.match(r.output, /commit run\n/, r.output);
  // The host's own "discard what the agent did", then a commit of its own.
  hostGit(root, 'restore', '.');
  assert.equal(fs.existsSync(path.join(root, '.git', 'hooks', 'pre-commit')), false, 'a hook was checked out');
  assert.equal(fs.existsSync(path.join(root, 'tools', 'HEAD')), false, 'a repository was laid out');
  assert.equal(fs.existsSync(path.dirname(outside) + '/x') || fs.existsSync(outside), false, 'a file outside the roots was written');
  fs.writeFileSync(path.join(root, 'r'), 'host\n');
  assert.equal(hostGit(root, 'commit', '-qam', 'host').status, 0);
  assert.equal(hostGit(root, 'show', 'HEAD:lib/a').stdout, 'good\n', 'the host committed content it never saw');
  assert.equal(fs.existsSync(canary), false);
  const refused = r.sandbox.denials.map((d) => `${d.path} ${d.rule}`).join('\n');
  assert.match(refused, /\.git\/index an index put in the host's git directory: an entry "(\.git\/hooks\/pre-commit|\.\.\/[^"]*)"/, refused);
  assert.match(refused, /\.git\/index the index of the host's git directory .* is written through its lock file/, refused);
});

test('a host work tree cannot be swapped for the run\'s; a repository an earlier run made stays the runs\'; a directory moved in from the temp dir is copied', when(noSandbox), async () => {
  const root = fs.realpathSync(tempDir('agent-exec-views-swap-'));
  const canary = path.join(fs.realpathSync(tempDir('agent-exec-views-canary-')), 'ran');
  const app = path.join(root, 'app');
  fs.mkdirSync(app);
  assert.equal(hostGit(app, 'init', '-q').status, 0);
  const r = await run({
    command: [
      `{ git init -q evil && git -C evil config core.fsmonitor 'echo swapped >> ${canary}; false'; } 2>/dev/null`,
      '{ mv app app-old && mv evil app; } 2>/dev/null',
      '{ rm -rf app; } 2>/dev/null',
      // Built in the temp dir, moved into the work tree: the rename is refused with EXDEV, so mv copies.
      'mkdir -p "$TMPDIR/build" && echo x > "$TMPDIR/build/out" && mv "$TMPDIR/build" app/dist && echo moved',
      'git init -q demo && echo made',
    ].join('; '),
    cwd: root,
    sandbox: { writableRoots: [root] },
  });
  assert.match(r.output, /moved\nmade\n$/, r.output);
  // (What git keeps besides its metadata, objects and refs, the run may delete, as it may commit.)
  assert.ok(fs.statSync(path.join(app, '.git')).isDirectory(), 'the host\'s work tree was moved or removed');
  assert.doesNotMatch(fs.readFileSync(path.join(app, '.git', 'config'), 'utf8'), /fsmonitor/);
  assert.equal(fs.readFileSync(path.join(app, 'dist', 'out'), 'utf8'), 'x\n');
  hostGit(app, 'status');
  assert.equal(fs.existsSync(canary), false, 'the host\'s git obeyed the run\'s repository');
  // The next run may configure the repository the last one made.
  const next = await run({ command: 'git -C demo config user.name agent && echo configured', cwd: root, sandbox: { writableRoots: [root] } });
  assert.match(next.output, /configured/, next.output);
});

test('a repository is the run\'s only if a run made it: not one the host makes later where a run made one, nor one the host makes while the run lives', when(noSandbox), async () => {
  const root = fs.realpathSync(tempDir('agent-exec-views-made-'));
  const canary = path.join(fs.realpathSync(tempDir('agent-exec-views-canary-')), 'ran');
  const hook = `#!/bin/sh\\necho hook >> ${canary}\\n`;
  const plant = (dir) => [
    `{ printf '${hook}' > ${dir}/.git/hooks/pre-commit && chmod +x ${dir}/.git/hooks/pre-commit; } 2>/dev/null`,
    `{ git -C ${dir} config core.fsmonitor 'echo fsmonitor >> ${canary}; false'; } 2>/dev/null`,
  ];
  // A run makes sub/.git where no repository is, then removes it; the agent makes its own there.
  const first = await run({ command: 'mkdir -p sub/.git && rm -rf sub && echo reserved', cwd: root, sandbox: { writableRoots: [root] } });
  assert.match(first.output, /reserved/, first.output);
  assert.equal(hostGit(root, 'init', '-q', 'sub').status, 0);
  const second = await run({ command: [...plant('sub'), 'echo done'].join('; '), cwd: root, sandbox: { writableRoots: [root] } });
  assert.match(second.output, /done/, second.output);
  // A long run; the agent makes repositories meanwhile (the root's own and one below it).
  const during = path.join(root, 'during');
  fs.mkdirSync(during);
  const flag = path.join(during, 'go');
  const live = run({
    command: [`while [ ! -e ${flag} ]; do sleep 0.05; done`, ...plant('.'), ...plant('inner'), 'echo planted'].join('; '),
    cwd: during,
    sandbox: { writableRoots: [during] },
    timeoutMs: 30000,
  });
  assert.equal(hostGit(during, 'init', '-q').status, 0);
  assert.equal(hostGit(during, 'init', '-q', 'inner').status, 0);
  fs.writeFileSync(flag, '');
  const third = await live;
  assert.match(third.output, /planted/, third.output);
  for (const dir of [path.join(root, 'sub'), during, path.join(during, 'inner')]) {
    assert.equal(fs.existsSync(path.join(dir, '.git', 'hooks', 'pre-commit')), false, `a hook was planted in ${dir}`);
    assert.doesNotMatch(fs.readFileSync(path.join(dir, '.git', 'config'), 'utf8'), /fsmonitor/, dir);
    hostGit(dir, 'status');
    hostGit(dir, '-c', 'user.name=h', '-c', 'user.email=h@h', 'commit', '-q', '--allow-empty', '-m', 'h');
  }
  assert.equal(fs.existsSync(canary), false, fs.existsSync(canary) ? fs.readFileSync(canary, 'utf8') : '');
  for (const r of [second, third]) {
    assert.match(r.sandbox.denials.map((d) => `${d.path} ${d.rule}`).join('\n'), /hooks\/pre-commit .*host's repository/);
  }
});

test('a repository the host makes in a directory the run made is the host\'s; so are the hooks its config names; an ACL set through a descriptor is judged', when(noSandbox, noPython), async () => {
  const root = fs.realpathSync(tempDir('agent-exec-views-filled-'));
  const canary = path.join(fs.realpathSync(tempDir('agent-exec-views-canary-')), 'ran');
  const hook = `#!/bin/sh\\necho hook >> ${canary}\\n`;
  const made = await run({ command: 'mkdir remote.git && mkdir -p x/.git && echo made', cwd: root, sandbox: { writableRoots: [root] } });
  assert.match(made.output, /made/, made.output);
  assert.equal(hostGit(root, 'init', '-q', '--bare', 'remote.git').status, 0);
  assert.equal(hostGit(root, 'init', '-q', 'x').status, 0);
  const acl = [
    'import os, struct',
    'entries = [(1, 7, 0xffffffff), (4, 6, 0xffffffff), (0x20, 6, 0xffffffff)]',
    'value = struct.pack("<I", 2) + b"".join(struct.pack("<HHI", t, p, i) for t, p, i in entries)',
    'fd = os.open("x/.git/config", os.O_RDONLY)',
    'try:',
    '    os.setxattr(fd, "system.posix_acl_access", value); print("acl set")',
    'except OSError as e:',
    '    print("acl refused", e.errno)',
  ].join('\n');
  const r = await run({
    command: [
      `{ printf '${hook}' > remote.git/hooks/post-receive && chmod +x remote.git/hooks/post-receive; } 2>/dev/null`,
      `{ printf '${hook}' > x/.git/hooks/pre-commit && chmod +x x/.git/hooks/pre-commit; } 2>/dev/null`,
      `{ git -C x config core.fsmonitor 'echo fsmonitor >> ${canary}; false'; } 2>/dev/null`,
      `python3 -c '${acl}'`,
      'echo done',
    ].join('; '),
    cwd: root,
    sandbox: { writableRoots: [root] },
  });
  assert.match(r.output, /acl refused/, r.output);
  assert.match(r.output, /done\n$/, r.output);
  for (const rel of ['remote.git/hooks/post-receive', 'x/.git/hooks/pre-commit']) {
    assert.equal(fs.existsSync(path.join(root, rel)), false, `${rel} was planted`);
  }
  const x = path.join(root, 'x');
  hostGit(x, 'status');
  fs.writeFileSync(path.join(x, 'a'), 'a');
  hostGit(x, 'add', 'a');
  hostGit(x, 'commit', '-q', '-m', 'a');
  hostGit(x, 'push', '-q', path.join(root, 'remote.git'), 'HEAD:main');
  assert.equal(fs.existsSync(canary), false, fs.existsSync(canary) ? fs.readFileSync(canary, 'utf8') : '');
  const refused = r.sandbox.denials.map((d) => `${d.operation} ${d.path} ${d.rule}`).join('\n');
  assert.match(refused, /remote\.git\/hooks\/post-receive .*host's repository/, refused);
  assert.match(refused, /xattr .*x\/\.git\/config/, refused);
  // A root's repository that names a hooks directory in its work tree (core.hooksPath): the host's
  // git runs what is there as it runs .git/hooks.
  const proj = repoRoot();
  assert.equal(hostGit(proj, 'config', 'core.hooksPath', '.githooks').status, 0);
  fs.mkdirSync(path.join(proj, '.githooks'));
  const hooks = await run({ command: `{ printf '${hook}' > .githooks/pre-commit && chmod +x .githooks/pre-commit; } 2>/dev/null; echo done`, cwd: proj, sandbox: { writableRoots: [proj] } });
  assert.match(hooks.output, /done/, hooks.output);
  assert.equal(fs.existsSync(path.join(proj, '.githooks', 'pre-commit')), false, 'a hook was planted in core.hooksPath');
  hostGit(proj, 'commit', '-q', '--allow-empty', '-m', 'h');
  assert.equal(fs.existsSync(canary), false);
  assert.match(hooks.sandbox.denials.map((d) => `${d.path} ${d.rule}`).join('\n'), /\.githooks\/pre-commit protected path/);
});

test('a directory holding a host work tree below it is copied, not moved: no repository of the run\'s takes the host\'s place', when(noSandbox), async () => {
  const root = fs.realpathSync(tempDir('agent-exec-views-parent-'));
  const canary = path.join(fs.realpathSync(tempDir('agent-exec-views-canary-')), 'ran');
  const lib = path.join(root, 'group', 'lib');
  fs.mkdirSync(lib, { recursive: true });
  assert.equal(hostGit(lib, 'init', '-q').status, 0);
  fs.writeFileSync(path.join(root, 'group', 'notes.txt'), 'kept\n');
  const r = await run({
    command: [
      // Each depth of parent: the host's repository two and one levels down.
      '{ mv group group.old; } 2>/dev/null; echo "mv:$?"',
      `{ mkdir -p group/lib && git init -q group/lib && git -C group/lib config core.fsmonitor 'echo moved >> ${canary}; false'; } 2>/dev/null`,
      'python3 -c "import os; os.rename(\'group\', \'elsewhere\')" 2>&1 | tail -1',
      'echo done',
    ].join('; '),
    cwd: root,
    sandbox: { writableRoots: [root] },
  });
  assert.match(r.output, /done\n$/, r.output);
  assert.match(r.output, /Invalid cross-device link/, 'a plain rename of the parent was not refused with EXDEV');
  assert.ok(fs.statSync(path.join(lib, '.git')).isDirectory(), 'the host\'s repository was moved');
  assert.doesNotMatch(fs.readFileSync(path.join(lib, '.git', 'config'), 'utf8'), /fsmonitor/);
  hostGit(lib, 'status');
  assert.equal(fs.existsSync(canary), false, 'the host\'s git obeyed the run\'s repository');
  assert.ok(r.sandbox.denials.some((d) => d.operation === 'rename' && /host's (work tree|git directory) .*group\/lib/.test(d.rule)), JSON.stringify(r.sandbox.denials));
});

test('a rename of a parent moves no protected path away and puts none in place: the directory is copied instead', when(noSandbox), async () => {
  const root = fs.realpathSync(tempDir('agent-exec-views-parents-'));
  for (const [rel, text] of [['secrets/key', 'original\n'], ['cfg/prod.env', 'original\n'], ['build/a/out', 'built\n']]) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
  }
  const r = await run({
    command: [
      '{ mv secrets s2 && echo hack > s2/key && mv s2 secrets; } 2>/dev/null',
      '{ mv cfg c2 && echo hack > c2/prod.env && mv c2 cfg; } 2>/dev/null',
      '{ mkdir -p z/later && echo evil > z/later/secret.txt && mv z/later later; } 2>/dev/null',
      // A rename with nothing protected below it is a rename.
      'mv build out && cat out/a/out',
    ].join('; '),
    cwd: root,
    sandbox: { writableRoots: [root], denyWrite: ['secrets/**', 'cfg/*.env', 'later/secret.txt'] },
  });
  assert.match(r.output, /built\n$/, r.output);
  assert.equal(fs.readFileSync(path.join(root, 'secrets/key'), 'utf8'), 'original\n');
  assert.equal(fs.readFileSync(path.join(root, 'cfg/prod.env'), 'utf8'), 'original\n');
  assert.equal(fs.existsSync(path.join(root, 'later/secret.txt')), false, 'a protected path was put in place by a rename');
  assert.ok(r.sandbox.denials.some((d) => d.operation === 'rename' && /protected path/.test(d.rule)), JSON.stringify(r.sandbox.denials));
});

test('a host git directory known by its content keeps HEAD and objects in place, and is not moved aside', when(noSandbox), async () => {
  const root = fs.realpathSync(tempDir('agent-exec-views-core-'));
  assert.equal(hostGit(root, 'init', '-q', '--bare', 'remote.git').status, 0);
  fs.mkdirSync(path.join(root, '.repos'));
  assert.equal(hostGit(root, 'init', '-q', '--separate-git-dir=.repos/lib', 'vendor/lib').status, 0);
  const r = await run({
    command: [
      '{ mv remote.git/HEAD remote.git/HEAD.x; printf "#!/bin/sh\\ntouch ../HOOKRAN\\n" > remote.git/hooks/post-receive; mv remote.git/HEAD.x remote.git/HEAD; } 2>/dev/null',
      '{ mv .repos/lib/objects .repos/lib/o2; echo x > .repos/lib/hooks/post-checkout; mv .repos/lib/o2 .repos/lib/objects; } 2>/dev/null',
      '{ rm remote.git/HEAD; } 2>/dev/null',
      '{ mv remote.git r2 && git init -q --bare remote.git && git -C remote.git config core.hooksPath /tmp; } 2>/dev/null',
      'echo done',
    ].join('; '),
    cwd: root,
    sandbox: { writableRoots: [root] },
  });
  assert.match(r.output, /done\n$/, r.output);
  assert.equal(fs.existsSync(path.join(root, 'remote.git/hooks/post-receive')), false, 'a hook was planted in the host\'s bare repository');
  assert.equal(fs.existsSync(path.join(root, '.repos/lib/hooks/post-checkout')), false, 'a hook was planted in the host\'s separate git directory');
  assert.ok(fs.existsSync(path.join(root, 'remote.git/HEAD')));
  assert.doesNotMatch(fs.readFileSync(path.join(root, 'remote.git/config'), 'utf8'), /hooksPath/);
});

test('no bare repository is laid out inside the host\'s work tree for its git to obey', when(noSandbox), async () => {
  const root = repoRoot();
  const canary = path.join(fs.realpathSync(tempDir('agent-exec-views-canary-')), 'ran');
  fs.mkdirSync(path.join(root, 'src'));
  fs.writeFileSync(path.join(root, 'src', 'main.c'), '');
  const r = await run({
    command: [
      `printf '[core]\\n\\tbare = false\\n\\tworktree = ..\\n\\tfsmonitor = "echo ran >> ${canary}; false"\\n' > src/config`,
      "{ echo 'ref: refs/heads/master' > src/HEAD; } 2>/dev/null; echo \"head:$?\"",
      'mkdir -p src/objects src/refs',
      '{ git init -q --bare inner.git; } 2>/dev/null; echo "bare:$?"',
    ].join('; '),
    cwd: root,
    sandbox: { writableRoots: [root] },
  });
  assert.match(r.output, /head:1/, r.output);
  assert.match(r.output, /bare:[1-9]/, r.output);
  assert.equal(fs.existsSync(path.join(root, 'src', 'HEAD')), false);
  hostGit(path.join(root, 'src'), 'status');
  assert.equal(fs.existsSync(canary), false, 'the host\'s git obeyed a repository the run laid out');
  assert.ok(r.sandbox.denials.some((d) => /a HEAD file inside the host's work tree/.test(d.rule)), JSON.stringify(r.sandbox.denials));
});

test('a process that makes itself non-dumpable still cannot write a host repository\'s hooks', when(noSandbox, noPython), async () => {
  const root = repoRoot();
  const lib = path.join(root, 'vendor', 'lib');
  fs.mkdirSync(lib, { recursive: true });
  assert.equal(hostGit(lib, 'init', '-q').status, 0);
  const r = await run({
    command: `python3 - <<'PY'
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
assert libc.prctl(4, 0, 0, 0, 0) == 0  # PR_SET_DUMPABLE 0
try:
    with open("vendor/lib/.git/hooks/post-checkout", "w") as f:
        f.write("#!/bin/sh\\n")
    print("written")
except OSError as e:
    print("refused", e.errno)
open("mine", "w").write("ok")
print(open("mine").read())
PY`,
    cwd: root,
    sandbox: { writableRoots: [root] },
  });
  assert.match(r.output, /^refused \d+\nok$/m, r.output);
  assert.equal(fs.existsSync(path.join(lib, '.git', 'hooks', 'post-checkout')), false, 'a hook was planted');
});
