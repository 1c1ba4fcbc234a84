'use strict';
// The sandbox as a small world (issue 31): what is not put in is not there. Each test runs the attack
// in a sandboxed run and then checks the world outside it: another session's terminal, a host
// listener, the host's lockers, the agent's environment, the loop device table. The suite runs as
// root and again as a normal user (CI's second pass).

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const { native, waitFor, track, killTracked, tempDir, run } = require('./helpers.js');

test.after(killTracked);

const caps = native.sandboxCapabilities();
const noSandbox = !caps.enforceable && `this host cannot sandbox: ${caps.problems.join('; ')}`;
const noDev = !caps.privateDev && 'this host cannot give a run its own /dev (no mount namespace with tmpfs and devpts)';
const noNetns = !caps.networkNamespace && 'this host cannot give a run its own network namespace';
const noPython = spawnSync('python3', ['-c', '1']).status !== 0 && 'python3 is not installed';
const when = (...reasons) => ({ skip: reasons.find(Boolean) || false });

const py = (lines) => `python3 - <<'PY'\n${lines.join('\n')}\nPY`;

/** The output of background session `id` once `match` finds something in it (a RegExp, or any output). */
async function outputOnce(id, what, match = /\S/, timeoutMs = 10000) {
  let out = '';
  await waitFor(async () => match.test((out = (await native.pollSession(id, { scopeKey: 'small-world' })).output ?? '')), { what, timeoutMs });
  return out;
}

/** A background PTY session running `sleep`, and the path of its terminal as the host sees it. */
async function victimTerminal() {
  const v = await native.exec({ command: 'tty; exec sleep 60', pty: true, background: true, scopeKey: 'small-world' });
  track(v.pid);
  let tty = '';
  await waitFor(
    async () => {
      const p = await native.pollSession(v.sessionId, { scopeKey: 'small-world' });
      tty = (p.output ?? '').split(/\r?\n/).find((l) => l.startsWith('/dev/pts/')) ?? '';
      return tty !== '';
    },
    { what: 'the victim session to print its terminal' },
  );
  return { id: v.sessionId, tty: tty.trim() };
}

/** The terminal's local flags as the host reads them (ECHO is 0o10). */
function hostLflag(tty) {
  const r = spawnSync('python3', ['-c', `import os, termios; fd = os.open(${JSON.stringify(tty)}, os.O_RDWR | os.O_NOCTTY); print(termios.tcgetattr(fd)[3])`], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return Number(r.stdout.trim());
}

test('the run has its own /dev: only the granted nodes, no consoles, loop devices, userfaultfd or kvm', when(noSandbox, noDev), async () => {
  const dir = tempDir();
  const r = await run({ command: 'ls -A /dev | sort | tr "\\n" " "', cwd: dir, sandbox: { writableRoots: [dir] } });
  assert.equal(r.exitCode, 0, r.output);
  assert.deepEqual(r.output.trim().split(' '), ['fd', 'full', 'null', 'ptmx', 'pts', 'random', 'shm', 'stderr', 'stdin', 'stdout', 'tty', 'urandom', 'zero']);
  // Every other device the host has is simply not there (whatever this host has of them).
  const hostOnly = ['loop0', 'loop-control', 'tty9', 'ttyS0', 'userfaultfd', 'kvm', 'mem', 'kmsg', 'console'].filter((n) => fs.existsSync(`/dev/${n}`));
  if (hostOnly.length) {
    const probe = await run({ command: hostOnly.map((n) => `test -e /dev/${n} && echo present ${n}`).join('; ') + '; true', cwd: dir, sandbox: { writableRoots: [dir] } });
    assert.equal(probe.output, '', `devices reachable inside: ${probe.output}`);
  }
  // The bit buckets and randomness work; shared memory is the run's own.
  const ok = await run({ command: 'echo x > /dev/null && head -c 4 /dev/urandom | wc -c && echo y > /dev/shm/mine && cat /dev/shm/mine', cwd: dir, sandbox: { writableRoots: [dir] } });
  assert.equal(ok.output, '4\ny\n');
  assert.equal(fs.existsSync('/dev/shm/mine'), false);
});

test('a run reaches no other terminal: another session keeps its output and its settings', when(noSandbox, noPython), async () => {
  const victim = await victimTerminal();
  const before = hostLflag(victim.tty);
  assert.ok(before & 0o10, 'the victim terminal echoes to begin with');
  const dir = tempDir();
  const attack = py([
    'import os, termios, fcntl',
    `t = ${JSON.stringify(victim.tty)}`,
    'for what in ("open", "write", "echo", "tcflow"):',
    '    try:',
    '        fd = os.open(t, os.O_RDWR | os.O_NOCTTY)',
    '        if what == "write": os.write(fd, b"INJECTED-BY-SANDBOX\\n")',
    '        if what == "echo":',
    '            a = termios.tcgetattr(fd); a[3] &= ~termios.ECHO; termios.tcsetattr(fd, termios.TCSANOW, a)',
    '        if what == "tcflow": termios.tcflow(fd, termios.TCOOFF)',
    '        print(what, "done")',
    '    except OSError as e:',
    '        print(what, "refused", e.errno)',
  ]);
  for (const pty of [false, true]) {
    const r = await run({ command: attack, cwd: dir, pty, sandbox: { writableRoots: [dir] } });
    assert.doesNotMatch(r.output, /done/, `pty=${pty}: ${r.output}`);
  }
  assert.equal(hostLflag(victim.tty), before, 'the victim terminal settings changed');
  const p = await native.pollSession(victim.id, { scopeKey: 'small-world' });
  assert.doesNotMatch(p.output ?? '', /INJECTED/);
  await native.killSession(victim.id, { scopeKey: 'small-world' });
});

test('a PTY run keeps its own terminal at its own name, sees no other, and can make new ptys in a pipe run', when(noSandbox, noDev, noPython), async () => {
  const dir = tempDir();
  const r = await run({ command: 'tty; ls /dev/pts', cwd: dir, pty: true, sandbox: { writableRoots: [dir] } });
  const lines = r.output.split(/\r?\n/).filter(Boolean);
  assert.match(lines[0], /^\/dev\/pts\/\d+$/, r.output);
  assert.deepEqual(lines.slice(1), [lines[0].slice('/dev/pts/'.length)]);
  const piped = await run({ command: py(['import os, pty', 'm, s = pty.openpty()', 'os.write(m, b"hi\\n")', 'print(os.ttyname(s), os.read(s, 3))']), cwd: dir, sandbox: { writableRoots: [dir] } });
  assert.equal(piped.exitCode, 0, piped.output);
  assert.match(piped.output, /^\/dev\/pts\/\d+ b'hi\\n'/);
});

test('terminal injection, console and loop device requests are refused and recorded', when(noSandbox, noPython), async () => {
  const dir = tempDir();
  const losetupBefore = fs.existsSync('/sys/block') ? fs.readdirSync('/sys/block').filter((n) => n.startsWith('loop')).length : 0;
  const r = await run({
    command: py([
      'import fcntl, termios, os',
      'for name, req in (("TIOCSTI", termios.TIOCSTI), ("LOOP_CTL_ADD", 0x4C80), ("VT_ACTIVATE", 0x5606)):',
      '    try:',
      '        fcntl.ioctl(0, req, b"x" if name == "TIOCSTI" else 0)',
      '        print(name, "done")',
      '    except OSError as e:',
      '        print(name, "refused", e.errno)',
    ]),
    cwd: dir,
    pty: true,
    sandbox: { writableRoots: [dir] },
  });
  for (const name of ['TIOCSTI', 'LOOP_CTL_ADD', 'VT_ACTIVATE']) assert.match(r.output, new RegExp(`${name} refused 1\\b`), r.output);
  const details = r.sandbox.denials.map((d) => d.detail).join(' ');
  assert.match(details, /ioctl\(TIOCSTI/);
  assert.match(details, /ioctl\(LOOP_\*/);
  assert.match(details, /ioctl\(VT_\*/);
  const losetupAfter = fs.existsSync('/sys/block') ? fs.readdirSync('/sys/block').filter((n) => n.startsWith('loop')).length : 0;
  assert.equal(losetupAfter, losetupBefore, 'the loop device table changed');
});

test('with the network off, nothing the run listens on can be reached from outside (abstract names included)', when(noSandbox, noNetns, noPython), async () => {
  const dir = tempDir();
  const name = `agent-exec-test-${process.pid}-${Date.now()}`;
  const listener = await native.exec({
    command: py([
      'import socket',
      'print("interfaces", sorted(l.split(":")[0].strip() for l in open("/proc/net/dev").readlines()[2:]), flush=True)',
      's = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)',
      'try:',
      `    s.bind("\\0${name}"); s.listen(1); print("listening", flush=True)`,
      'except OSError as e:',
      '    print("refused", e.errno, flush=True)',
      'import time; time.sleep(2)',
    ]),
    cwd: dir,
    background: true,
    scopeKey: 'small-world',
    sandbox: { writableRoots: [dir] },
  });
  track(listener.pid);
  const out = await outputOnce(listener.sessionId, 'the sandboxed listener', /listening|refused/);
  // Its own network namespace: no interface but its loopback.
  assert.match(out, /interfaces \['lo'\]/);
  // An abstract name is refused and recorded (nothing may connect to one with the network off).
  assert.match(out, /refused 1\b/, out);
  const reached = await new Promise((resolve) => {
    const c = net.connect({ path: `\0${name}` });
    c.on('connect', () => {
      c.destroy();
      resolve(true);
    });
    c.on('error', () => resolve(false));
  });
  assert.equal(reached, false, 'a host process connected to the sandbox\'s abstract socket');
  const ended = await native.pollSession(listener.sessionId, { scopeKey: 'small-world', timeoutMs: 20000 });
  assert.ok(ended.sandbox.denials.some((d) => d.operation === 'bind' && d.detail.includes(name)), JSON.stringify(ended.sandbox.denials));
  assert.ok(ended.sandbox.mechanisms.some((m) => m.startsWith('its own network namespace')));
});

test('the agent\'s credentials are not inherited: dropped by name, passed on only by name', when(noSandbox), async () => {
  const dir = tempDir();
  const names = { key: `AGENT_EXEC_TEST_API_KEY`, token: `AGENT_EXEC_TEST_TOKEN`, plain: 'AGENT_EXEC_TEST_PLAIN', url: 'AGENT_EXEC_TEST_DATABASE_URL', bare: 'AGENT_EXEC_TEST_CACHE_URL' };
  process.env[names.key] = 'value-of-key';
  process.env[names.token] = 'value-of-token';
  process.env[names.plain] = 'plain-value';
  // A password inside a URL is a credential whatever the variable is called; a URL without one is not.
  process.env[names.url] = 'postgres://app:url-password@db.internal/app';
  process.env[names.bare] = 'redis://cache.internal:6379/0';
  try {
    const r = await run({ command: 'env', cwd: dir, sandbox: { writableRoots: [dir], passEnv: [names.token] }, env: { MY_DEPLOY_SECRET: 'given' } });
    assert.doesNotMatch(r.output, /value-of-key/);
    assert.doesNotMatch(r.output, /url-password/);
    assert.match(r.output, /AGENT_EXEC_TEST_CACHE_URL=redis:\/\/cache\.internal:6379\/0/);
    assert.ok(r.sandbox.droppedEnv.includes(names.url));
    assert.match(r.output, /AGENT_EXEC_TEST_TOKEN=value-of-token/);
    assert.match(r.output, /AGENT_EXEC_TEST_PLAIN=plain-value/);
    // What the caller gives in env is passed on by name.
    assert.match(r.output, /MY_DEPLOY_SECRET=given/);
    assert.ok(r.sandbox.droppedEnv.includes(names.key));
    assert.ok(!r.sandbox.droppedEnv.includes(names.token));
    assert.ok(!r.sandbox.droppedEnv.some((n) => n.includes('value')), 'names only, never values');
    // Unsandboxed runs keep the host's environment as it is.
    const plain = await run({ command: `printenv ${names.key}`, cwd: dir });
    assert.equal(plain.output, 'value-of-key\n');
  } finally {
    for (const n of Object.values(names)) delete process.env[n];
  }
});

test('a run cannot lease or lock the host\'s files: the host\'s own lockers go on', when(noSandbox, noPython, spawnSync('flock', ['--version']).status !== 0 && 'flock (util-linux) is not installed'), async () => {
  const dir = tempDir();
  const outside = tempDir('agent-exec-lock-');
  const file = path.join(outside, 'host.lock');
  fs.writeFileSync(file, 'x');
  fs.chmodSync(outside, 0o755);
  fs.chmodSync(file, 0o644);
  const holder = await native.exec({
    command: py([
      'import fcntl, os, time',
      `f = open(${JSON.stringify(file)})`,
      'for what, call in (("flock", lambda: fcntl.flock(f, fcntl.LOCK_SH)), ("lockf", lambda: fcntl.lockf(f, fcntl.LOCK_SH)), ("lease", lambda: fcntl.fcntl(f, fcntl.F_SETLEASE, fcntl.F_RDLCK))):',
      '    try:',
      '        call(); print(what, "held", flush=True)',
      '    except OSError as e:',
      '        print(what, "refused", e.errno, flush=True)',
      'own = open("mine", "w"); fcntl.flock(own, fcntl.LOCK_EX); print("own locked", flush=True)',
      'time.sleep(30)',
    ]),
    cwd: dir,
    background: true,
    scopeKey: 'small-world',
    sandbox: { writableRoots: [dir] },
  });
  track(holder.pid);
  const out = await outputOnce(holder.sessionId, 'the sandboxed locker', /own locked/);
  assert.doesNotMatch(out, /held/, out);
  // The host takes an exclusive lock at once, while the run lives.
  const host = spawnSync('flock', ['-n', '-x', file, 'true']);
  assert.equal(host.status, 0, 'the host could not lock its own file');
  await native.killSession(holder.sessionId, { scopeKey: 'small-world' });
  const ended = await native.pollSession(holder.sessionId, { scopeKey: 'small-world', timeoutMs: 10000 });
  const ops = (ended.sandbox?.denials ?? []).map((d) => `${d.operation} ${d.detail}`);
  assert.ok(ops.some((o) => o.startsWith('lock flock')), ops.join(', '));
  assert.ok(ops.some((o) => o === 'syscall fcntl(F_SETLEASE)'), ops.join(', '));
});

test('an unprivileged run cannot use up its user\'s inotify instances: the agent\'s fs.watch still works', when(noSandbox, process.getuid() === 0 && 'root runs have no user namespace of their own (the README says so)', !caps.userNamespaces && 'no user namespaces here', noPython), async () => {
  const dir = tempDir();
  const hog = await native.exec({
    command: py([
      'import ctypes, time',
      'libc = ctypes.CDLL(None, use_errno=True)',
      'n = 0',
      'while n < 1000 and libc.inotify_init() >= 0:',
      '    n += 1',
      'print("instances", n, flush=True)',
      'time.sleep(30)',
    ]),
    cwd: dir,
    background: true,
    scopeKey: 'small-world',
    sandbox: { writableRoots: [dir] },
  });
  track(hog.pid);
  const out = await outputOnce(hog.sessionId, 'the sandboxed inotify hog', /instances \d+\n/);
  const n = Number(/instances (\d+)/.exec(out)[1]);
  assert.ok(n <= 32, `the run took ${n} inotify instances`);
  const w = fs.watch(dir);
  w.close();
  await native.killSession(hog.sessionId, { scopeKey: 'small-world' });
});

test('an unprivileged run cannot use up its user\'s inotify watches: the agent\'s fs.watch still works', when(noSandbox, process.getuid() === 0 && 'root runs have no user namespace of their own (the README says so)', !caps.userNamespaces && 'no user namespaces here', noPython), async () => {
  const dir = tempDir();
  const userWatches = Number(fs.readFileSync('/proc/sys/fs/inotify/max_user_watches', 'utf8'));
  // One instance, a watch on every file it can reach, until the kernel says no (or the user's whole
  // quota is held, which is what a run must not get). Hard links share a watch: distinct ones count.
  const hog = await native.exec({
    command: py([
      'import ctypes, os, time',
      'libc = ctypes.CDLL(None, use_errno=True)',
      'fd = libc.inotify_init()',
      'n, wds = 0, set()',
      `limit = ${userWatches}`,
      'for top in ("/usr", "/etc", "/var", "/opt"):',
      '    for root, dirs, files in os.walk(top):',
      '        for f in files + dirs:',
      '            if n >= limit: break',
      '            wd = libc.inotify_add_watch(fd, os.path.join(root, f).encode(), 2)',
      '            if wd >= 0: wds.add(wd); n = len(wds)',
      '            elif ctypes.get_errno() == 28: limit = n',
      'print("watches", n, flush=True)',
      'time.sleep(30)',
    ]),
    cwd: dir,
    background: true,
    scopeKey: 'small-world',
    timeoutMs: 120000,
    sandbox: { writableRoots: [dir] },
  });
  track(hog.pid);
  const out = await outputOnce(hog.sessionId, 'the sandboxed inotify watch hog', /watches/, 90000);
  const n = Number(/watches (\d+)/.exec(out)[1]);
  assert.ok(n > 0, out);
  assert.ok(n <= Math.max(8192, Math.floor(userWatches / 4)), `the run took ${n} of the user's ${userWatches} inotify watches`);
  // While the run holds them, the agent watches files as ever.
  const w = fs.watch(dir);
  w.close();
  await native.killSession(hog.sessionId, { scopeKey: 'small-world' });
});

test('a run\'s own devpts holds at most 256 terminals: the machine\'s pool of ptys is not the run\'s to use up', when(noSandbox, noPython), async () => {
  const dir = tempDir();
  const r = await run({
    command: py([
      'import os',
      'held = []',
      'for i in range(1000):',
      '    try: held.append(os.openpty())',
      '    except OSError: break',
      'print("ptys", len(held))',
    ]),
    cwd: dir,
    sandbox: { writableRoots: [dir] },
  });
  const n = Number(/ptys (\d+)/.exec(r.output)?.[1]);
  assert.ok(n > 0 && n <= 256, `the run opened ${n} ptys: ${r.output}`);
});

/** A host process running `script` with the addon; its stdout lines. */
function hostScript(script) {
  const r = spawnSync(process.execPath, ['-e', `const native = require(${JSON.stringify(path.join(__dirname, '..', 'index.js'))});\n${script}`], { encoding: 'utf8', timeout: 60000 });
  return { lines: r.stdout.split('\n').filter(Boolean), status: r.status, signal: r.signal, stderr: r.stderr };
}

test('a run\'s temp dir is private (mode 700) and goes when the run ends, background runs included', when(noSandbox), async () => {
  const dir = tempDir();
  const r = await run({ command: 'stat -c %a "$TMPDIR"; echo secret > "$TMPDIR/f"', cwd: dir, sandbox: { writableRoots: [dir] } });
  assert.equal(r.output, '700\n');
  assert.equal(fs.existsSync(r.sandbox.tmpDir), false, 'the temp dir outlived its run');
  const bg = await native.exec({ command: 'echo "$TMPDIR"; exec sleep 30', cwd: dir, background: true, scopeKey: 'small-world', sandbox: { writableRoots: [dir] } });
  track(bg.pid);
  const tmp = (await outputOnce(bg.sessionId, 'the background run to print its temp dir')).trim();
  assert.equal(fs.existsSync(tmp), true);
  await native.killSession(bg.sessionId, { scopeKey: 'small-world' });
  await waitFor(() => !fs.existsSync(tmp), { what: 'the killed background run\'s temp dir to go' });
});

for (const [how, end] of [
  ['process.exit()', 'process.exit(0)'],
  ['SIGKILL (the watchdog)', "process.kill(process.pid, 'SIGKILL')"],
]) {
  test(`the temp dirs of running sandboxed runs go when the host ends by ${how}`, when(noSandbox), async () => {
    const dir = tempDir();
    const host = hostScript(`(async () => {
      const bg = await native.exec({ command: 'echo "$TMPDIR"; exec sleep 60', cwd: ${JSON.stringify(dir)}, background: true, sandbox: { writableRoots: [${JSON.stringify(dir)}] } });
      for (let i = 0; i < 200; i++) {
        const out = (await native.pollSession(bg.sessionId, {})).output.trim();
        if (out) { console.log(out); break; }
        await new Promise((r) => setTimeout(r, 25));
      }
      ${end};
    })()`);
    const tmp = host.lines[0];
    assert.match(tmp ?? '', /agent-exec-sandbox-/, host.stderr);
    await waitFor(() => !fs.existsSync(tmp), { what: `${tmp} to be removed after the host ended`, timeoutMs: 15000 });
  });
}

test('a run cannot read other runs\' temp dirs or the session logs', when(noSandbox), async () => {
  const dir = tempDir();
  const other = await native.exec({ command: 'echo other-secret > "$TMPDIR/secret"; echo "$TMPDIR"; exec sleep 30', cwd: dir, background: true, scopeKey: 'small-world', sandbox: { writableRoots: [dir] } });
  track(other.pid);
  const otherTmp = (await outputOnce(other.sessionId, 'the other run')).trim();
  // A session whose output is kept in a log file from its first byte.
  const logged = await native.exec({ command: 'echo log-secret', cwd: dir, logAboveChars: 0, scopeKey: 'small-world' });
  assert.ok(logged.outputFile && fs.existsSync(logged.outputFile), 'the logged session has a log file');
  const r = await run({ command: `cat ${otherTmp}/secret; cat ${logged.outputFile}; ls ${path.dirname(otherTmp)} | wc -l`, cwd: dir, sandbox: { writableRoots: [dir] } });
  assert.doesNotMatch(r.output, /other-secret|log-secret/);
  assert.match(r.output, /\b1\n$/, 'only its own temp dir is there');
  await native.killSession(other.sessionId, { scopeKey: 'small-world' });
});

test('git metadata stays the host\'s: commondir, worktree config, the .git entry itself; commits still work', when(noSandbox), async () => {
  const dir = tempDir();
  const env = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@e', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@e', HOME: '/nonexistent' };
  const git = (...args) => spawnSync('git', args, { cwd: dir, env, encoding: 'utf8' });
  git('init', '-q');
  fs.writeFileSync(path.join(dir, 'f'), 'a\n');
  git('add', 'f');
  git('commit', '-qm', 'one');
  const planted = tempDir('agent-exec-planted-');
  const canary = path.join(planted, 'ran');
  fs.writeFileSync(path.join(planted, 'config'), `[core]\n\tfsmonitor = "touch ${canary}; false"\n`);
  const attack = [
    `echo ${planted} > .git/commondir`,
    `printf '[core]\\n\\tfsmonitor = "touch ${canary}; false"\\n' >> .git/config.worktree`,
    'mv .git .git-moved',
    `mkdir -p sub && echo "gitdir: ${planted}" > sub/.git`,
    'echo b > f && git commit -qam two && echo committed',
    // A repository of the run's own works outside the host's work tree (inside it, the host's git
    // could be made to enter it: sandbox-views.test.js).
    'mkdir -p "$TMPDIR/fresh" && cd "$TMPDIR/fresh" && git init -q && echo x > x && git add x && git commit -qm n && echo fresh-ok',
  ].join('; ');
  const r = await run({ command: attack, cwd: dir, env: { GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@e', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@e' }, sandbox: { writableRoots: [dir] } });
  assert.match(r.output, /committed/);
  assert.match(r.output, /fresh-ok/);
  // The host's git there runs nothing of the command's.
  const status = git('status', '--short');
  assert.equal(status.status, 0, status.stderr);
  spawnSync('git', ['status'], { cwd: path.join(dir, 'sub'), env });
  assert.equal(fs.existsSync(canary), false, 'the host\'s git ran the command\'s fsmonitor');
  assert.equal(fs.existsSync(path.join(dir, '.git/commondir')), false);
  assert.equal(fs.existsSync(path.join(dir, '.git-moved')), false);
  assert.equal(fs.existsSync(path.join(dir, 'sub/.git')), false);
  const refused = r.sandbox.denials.map((d) => `${d.operation} ${path.basename(d.path ?? '')}`);
  for (const want of ['write commondir', 'write config.worktree', 'rename .git', 'write .git']) assert.ok(refused.includes(want), `${want} in ${refused.join(', ')}`);
  assert.equal(git('log', '--oneline').stdout.split('\n').filter(Boolean).length, 2);
});

test('without a mount namespace (forced, as on hosts that cannot make one): no other pty is writable, abstract binds are refused and recorded', when(noSandbox, noPython), async () => {
  const victim = await victimTerminal();
  const before = hostLflag(victim.tty);
  const dir = tempDir();
  const attack = py([
    'import os, socket, termios',
    'try:',
    `    fd = os.open(${JSON.stringify(victim.tty)}, os.O_RDWR | os.O_NOCTTY); os.write(fd, b"INJECTED\\n"); print("pty written")`,
    'except OSError as e:',
    '    print("pty refused", e.errno)',
    's = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)',
    'try:',
    `    s.bind("\\0agent-exec-fallback-${process.pid}"); s.listen(1); print("abstract bound")`,
    'except OSError as e:',
    '    print("abstract refused", e.errno)',
  ]);
  // A host of its own, started with the switch: capabilities are probed once per process.
  const host = hostScript(`process.env.AGENT_EXEC_NO_MOUNT_NAMESPACE = '1';
    (async () => {
      const caps = native.sandboxCapabilities();
      const r = await native.exec({ command: ${JSON.stringify(attack)}, cwd: ${JSON.stringify(dir)}, sandbox: { writableRoots: [${JSON.stringify(dir)}] } });
      const own = await native.exec({ command: 'echo mine > "$(tty)" && echo own-ok', cwd: ${JSON.stringify(dir)}, pty: true, sandbox: { writableRoots: [${JSON.stringify(dir)}] } });
      console.log(JSON.stringify({ privateDev: caps.privateDev, binds: caps.readOnlyBinds, output: r.output, denials: r.sandbox.denials, own: own.output }));
    })()`);
  const got = JSON.parse(host.lines[0] ?? 'null');
  assert.ok(got, host.stderr);
  assert.equal(got.privateDev, false);
  assert.equal(got.binds, false);
  assert.match(got.output, /pty refused/);
  assert.match(got.output, /abstract refused 1\b/);
  assert.ok(got.denials.some((d) => d.operation === 'bind' && /@agent-exec-fallback/.test(d.detail)), JSON.stringify(got.denials));
  // The run's own terminal stays its own.
  assert.match(got.own, /own-ok/);
  assert.equal(hostLflag(victim.tty), before);
  const p = await native.pollSession(victim.id, { scopeKey: 'small-world' });
  assert.doesNotMatch(p.output ?? '', /INJECTED/);
  await native.killSession(victim.id, { scopeKey: 'small-world' });
});

// The devices a run may write to are granted for their contents. Their names and metadata are the
// host's: without a mount namespace they are the host's own nodes, and the supervisor (which makes
// such calls itself, where Landlock does not reach, and Landlock does not cover metadata anyway) let a
// root run `chmod 600 /dev/full` on the host. Checked on the host, with and without a mount namespace.
function deviceState(p) {
  const st = fs.lstatSync(p);
  return { char: st.isCharacterDevice(), mode: (st.mode & 0o7777).toString(8), uid: st.uid, gid: st.gid, mtime: st.mtimeMs, rdev: st.rdev };
}

/** Put /dev/full back as it was, should a broken build have changed it (root only can). */
function restoreDevice(p, was) {
  if (process.getuid() !== 0) return;
  let now = null;
  try { now = fs.lstatSync(p); } catch { /* gone */ }
  if (now && !now.isCharacterDevice()) fs.rmSync(p, { recursive: true, force: true });
  if (!now || !now.isCharacterDevice()) spawnSync('mknod', [p, 'c', String(was.rdev >> 8), String(was.rdev & 0xff)]);
  fs.chmodSync(p, parseInt(was.mode, 8));
  fs.chownSync(p, was.uid, was.gid);
  fs.utimesSync(p, was.mtime / 1000, was.mtime / 1000);
}

test('a device\'s contents are writable, never its name or metadata: the host\'s nodes and other terminals stay as they are', when(noSandbox, noPython), async () => {
  const victim = await victimTerminal();
  const full = '/dev/full';
  const was = { full: deviceState(full), tty: deviceState(victim.tty) };
  const dir = fs.realpathSync(tempDir());
  const attack = (tty) => py([
    'import os',
    'def attempt(name, call):',
    '    try:',
    '        call(); print(name, "made")',
    '    except OSError as e:',
    '        print(name, "refused", e.errno)',
    `for dev in ("/dev/full", ${JSON.stringify(tty)}):`,
    '    attempt("chmod " + dev, lambda: os.chmod(dev, 0o600 if dev == "/dev/full" else 0o666))',
    '    attempt("utime " + dev, lambda: os.utime(dev, (1, 1)))',
    '    attempt("chown " + dev, lambda: os.chown(dev, os.getuid(), os.getgid()))',
    '    attempt("xattr " + dev, lambda: os.setxattr(dev, "user.x", b"1"))',
    '    open("f", "w").write("x")',
    '    attempt("rename-onto " + dev, lambda: os.rename("f", dev))',
    '    attempt("unlink " + dev, lambda: os.unlink(dev))',
    // Contents stay writable: the grant is for them.
    'os.write(os.open("/dev/null", os.O_WRONLY | os.O_TRUNC), b"x"); print("null written")',
    'try:',
    '    os.write(os.open("/dev/full", os.O_WRONLY), b"x")',
    'except OSError as e:',
    '    print("full", e.errno)',
  ]);
  const host = hostScript(`process.env.AGENT_EXEC_NO_MOUNT_NAMESPACE = '1';
    (async () => {
      const r = await native.exec({ command: ${JSON.stringify(attack(victim.tty))}, cwd: ${JSON.stringify(dir)}, sandbox: { writableRoots: [${JSON.stringify(dir)}] } });
      console.log(JSON.stringify({ binds: native.sandboxCapabilities().readOnlyBinds, output: r.output, denials: r.sandbox.denials }));
    })()`);
  try {
    const inside = await run({ command: attack(victim.tty), cwd: dir, sandbox: { writableRoots: [dir] } });
    const without = JSON.parse(host.lines[0] ?? 'null');
    assert.ok(without, host.stderr);
    assert.equal(without.binds, false, 'the switch did not take the mount namespace away');
    for (const [mode, output] of [['own mount namespace', inside.output], ['no mount namespace', without.output]]) {
      assert.doesNotMatch(output, / made$/m, `${mode}: ${output}`);
      assert.match(output, /^null written$/m, `${mode}: ${output}`);
      assert.match(output, /^full 28$/m, `${mode}: ${output}`);
    }
    // Recorded where the supervisor refused (without a mount namespace every one is its own).
    assert.ok(without.denials.some((d) => d.operation === 'chmod' && d.path === full), JSON.stringify(without.denials));
    assert.deepEqual(deviceState(full), was.full, '/dev/full changed on the host');
    assert.deepEqual(deviceState(victim.tty), was.tty, 'another terminal changed on the host');
  } finally {
    restoreDevice(full, was.full);
    await native.killSession(victim.id, { scopeKey: 'small-world' });
  }
});

// The file systems' own ioctls change a file through a descriptor opened for reading, where its owner
// asks (`chattr +A`: FS_IOC_SETFLAGS; an inode's version; fs-verity; fsxattr), and `file_setattr` by
// path: Landlock covers none, and without a mount namespace nothing else stood. Checked on the host's
// file, in every mode; the reads (`lsattr`) and `cp`'s reflink clone stay.
function inodeFlags(file) {
  const r = spawnSync('python3', ['-c', `import fcntl, os, struct, sys
try:
    print(struct.unpack("l", fcntl.ioctl(os.open(sys.argv[1], os.O_RDONLY), 0x80086601, b"\\0" * 8))[0])
except OSError as e:
    print("unsupported", e.errno)`, file], { encoding: 'utf8' });
  return r.stdout.trim();
}

test('file-system attributes are not changed through a descriptor: chattr-like ioctls and file_setattr are refused and recorded', when(noSandbox, noPython), async () => {
  const base = fs.realpathSync(tempDir());
  const dir = path.join(base, 'root');
  fs.mkdirSync(dir);
  const outside = path.join(base, 'outside.txt');
  fs.writeFileSync(outside, 'host file');
  fs.writeFileSync(path.join(dir, 'own.txt'), 'own');
  const before = inodeFlags(outside);
  const attack = py([
    'import ctypes, fcntl, os, struct',
    'libc = ctypes.CDLL(None, use_errno=True)',
    'def attempt(name, call):',
    '    try:',
    '        call(); print(name, "made")',
    '    except OSError as e:',
    '        print(name, "refused", e.errno)',
    `fd = os.open(${JSON.stringify(outside)}, os.O_RDONLY)`,
    'attempt("setflags", lambda: fcntl.ioctl(fd, 0x40086602, struct.pack("l", 0x80 | 0x40)))',
    'attempt("setversion", lambda: fcntl.ioctl(fd, 0x40086604, struct.pack("l", 12345)))',
    'attempt("fssetxattr", lambda: fcntl.ioctl(fd, 0x401c5820, b"\\0" * 28))',
    'attempt("verity", lambda: fcntl.ioctl(fd, 0x40806685, b"\\0" * 128))',
    'def file_setattr():',
    '    attr = ctypes.create_string_buffer(24)',
    `    if libc.syscall(469, -100, ${JSON.stringify(outside).replace(/"/g, '"')}.encode(), attr, 24, 0) < 0:`,
    '        raise OSError(ctypes.get_errno(), "file_setattr")',
    'attempt("file_setattr", file_setattr)',
    // Reads answer as the kernel's would (a file system without flags: ENOTTY), never EPERM.
    'try:',
    '    fcntl.ioctl(os.open("own.txt", os.O_RDONLY), 0x80086601, b"\\0" * 8); print("getflags read")',
    'except OSError as e:',
    '    print("getflags", "refused" if e.errno == 1 else "unsupported", e.errno)',
  ]);
  const host = hostScript(`process.env.AGENT_EXEC_NO_MOUNT_NAMESPACE = '1';
    (async () => {
      const r = await native.exec({ command: ${JSON.stringify(attack)}, cwd: ${JSON.stringify(dir)}, sandbox: { writableRoots: [${JSON.stringify(dir)}] } });
      console.log(JSON.stringify({ output: r.output, denials: r.sandbox.denials }));
    })()`);
  const without = JSON.parse(host.lines[0] ?? 'null');
  assert.ok(without, host.stderr);
  const r = await run({ command: attack, cwd: dir, sandbox: { writableRoots: [dir] } });
  const inside = { output: r.output, denials: r.sandbox.denials };
  for (const [mode, got] of [['own mount namespace', inside], ['no mount namespace', without]]) {
    for (const name of ['setflags', 'setversion', 'fssetxattr', 'verity', 'file_setattr']) {
      assert.match(got.output, new RegExp(`^${name} refused 1$`, 'm'), `${mode}: ${got.output}`);
    }
    assert.doesNotMatch(got.output, /^getflags refused/m, `${mode}: ${got.output}`);
    assert.ok(got.denials.some((d) => /FS_IOC_SETFLAGS|FS_IOC\/EXT4_IOC/.test(d.detail)), `${mode}: ${JSON.stringify(got.denials)}`);
    assert.ok(got.denials.some((d) => d.detail === 'file_setattr'), `${mode}: ${JSON.stringify(got.denials)}`);
  }
  assert.equal(inodeFlags(outside), before, 'the host file\'s flags changed');
});

// The run's standard descriptors are opened by the host before the run's mount namespace exists. One
// that is the host's /dev/null stood on the host's writable /dev: where the kernel decides metadata
// calls through a descriptor (the mounts read-only), a root run's `fchmod(0, 0640)` or `futimens(0)`
// changed /dev/null for every program of the machine. Checked on the host, in every mode.
test('the run\'s standard descriptors are not the host\'s /dev/null: metadata changes through them reach nothing of the host\'s', when(noSandbox, noPython), async () => {
  const dir = fs.realpathSync(tempDir());
  const was = deviceState('/dev/null');
  // A script file, not a here-document: the program's own fd 0 must be the one the host gave.
  const script = path.join(dir, 'fds.py');
  fs.writeFileSync(script, [
    'import os',
    'for fd in (0, 1, 2):',
    '    for name, call in (("chmod", lambda: os.chmod(fd, 0o640)), ("utime", lambda: os.utime(fd, (1, 1))), ("chown", lambda: os.chown(fd, -1, -1))):',
    '        try:',
    '            call(); print(fd, name, "made")',
    '        except OSError as e:',
    '            print(fd, name, "refused", e.errno)',
    'print("done")',
  ].join('\n'));
  const attack = `python3 ${script}; python3 ${script} 2>/dev/null </dev/null`;
  const modes = [['default', {}], ['no PID namespace', { AGENT_EXEC_NO_PID_NAMESPACE: '1' }], ['no mount namespace', { AGENT_EXEC_NO_MOUNT_NAMESPACE: '1' }]];
  try {
    for (const [mode, env] of modes) {
      for (const stdio of [{}, { stdin: 'closed' }]) {
        const host = `
          const api = require(${JSON.stringify(path.join(__dirname, '..', 'js', 'index.js'))});
          api.exec({ command: ${JSON.stringify(attack)}, cwd: ${JSON.stringify(dir)}, ...${JSON.stringify(stdio)}, sandbox: { writableRoots: [${JSON.stringify(dir)}] } })
            .then((r) => console.log(JSON.stringify({ output: r.output })), (e) => console.log(JSON.stringify({ error: e.message })));`;
        const out = spawnSync(process.execPath, ['-e', host], { encoding: 'utf8', timeout: 60000, env: { ...process.env, ...env } });
        const got = JSON.parse(out.stdout.trim().split('\n').pop() || 'null');
        assert.ok(got && got.output !== undefined, `${mode}: ${out.stdout}${out.stderr}`);
        assert.match(got.output, /done/, `${mode}: ${got.output}`);
        assert.deepEqual(deviceState('/dev/null'), was, `${mode} ${JSON.stringify(stdio)}: the host's /dev/null changed\n${got.output}`);
      }
    }
  } finally {
    restoreDevice('/dev/null', was);
  }
});

// Without namespaces of its own, a run reached the host's POSIX message queues by name: mq_unlink
// removed another program's queue (the queue file system's own removal, which Landlock does not see).
// And a file's write-lifetime hint is its owner's to set through any descriptor, on any mount.
test('without namespaces of its own, a run removes no message queue of the host\'s, and sets no write hint on a host file', when(noSandbox, noPython), () => {
  const base = fs.realpathSync(tempDir());
  const dir = path.join(base, 'root');
  fs.mkdirSync(dir);
  const outside = path.join(base, 'outside.txt');
  fs.writeFileSync(outside, 'host file');
  const queue = `/agent-exec-test-${process.pid}`;
  const mq = (what) => mqNamed(what, queue);
  const mqNamed = (what, name) => spawnSync('python3', ['-c', `import ctypes, os, sys
rt = ctypes.CDLL("librt.so.1", use_errno=True)
rt.mq_open.restype = ctypes.c_int
if sys.argv[1] == "create":
    print(rt.mq_open(sys.argv[2].encode(), os.O_CREAT | os.O_RDWR, 0o600, None) >= 0)
elif sys.argv[1] == "exists":
    print(rt.mq_open(sys.argv[2].encode(), os.O_RDONLY) >= 0)
else:
    print(rt.mq_unlink(sys.argv[2].encode()) == 0)`, what, name], { encoding: 'utf8' }).stdout.trim();
  const hint = () => spawnSync('python3', ['-c', `import fcntl, os, struct, sys
print(struct.unpack("Q", fcntl.fcntl(os.open(sys.argv[1], os.O_RDONLY), 1035, b"\\0" * 8))[0])`, outside], { encoding: 'utf8' }).stdout.trim();
  assert.equal(mq('create'), 'True');
  const hintBefore = hint();
  try {
    const attack = py([
      'import ctypes, fcntl, os, struct',
      'rt = ctypes.CDLL("librt.so.1", use_errno=True)',
      `r = rt.mq_unlink(${JSON.stringify(queue)}.encode())`,
      'print("mq_unlink", "made" if r == 0 else f"refused {ctypes.get_errno()}")',
      // A queue made in the host's namespace stayed there although Landlock refused the open; one
      // of the host's opened for reading is drained by mq_receive.
      `r = rt.mq_open(${JSON.stringify(queue + '-run')}.encode(), os.O_CREAT | os.O_RDWR, 0o600, None)`,
      'print("mq_open create", "made" if r >= 0 else f"refused {ctypes.get_errno()}")',
      `r = rt.mq_open(${JSON.stringify(queue)}.encode(), os.O_RDONLY)`,
      'print("mq_open read", "made" if r >= 0 else f"refused {ctypes.get_errno()}")',
      'try:',
      `    fcntl.fcntl(os.open(${JSON.stringify(outside)}, os.O_RDONLY), 1036, struct.pack("Q", 3)); print("hint made")`,
      'except OSError as e:',
      '    print("hint refused", e.errno)',
    ]);
    for (const env of [{ AGENT_EXEC_NO_PID_NAMESPACE: '1' }, { AGENT_EXEC_NO_MOUNT_NAMESPACE: '1' }, {}]) {
      const script = `
        const api = require(${JSON.stringify(path.join(__dirname, '..', 'js', 'index.js'))});
        api.exec({ command: ${JSON.stringify(attack)}, cwd: ${JSON.stringify(dir)}, sandbox: { writableRoots: [${JSON.stringify(dir)}] } })
          .then((r) => console.log(JSON.stringify({ output: r.output, denials: r.sandbox.denials })), (e) => console.log(JSON.stringify({ error: e.message })));`;
      const out = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 60000, env: { ...process.env, ...env } });
      const got = JSON.parse(out.stdout.trim().split('\n').pop() || 'null');
      assert.ok(got && got.output !== undefined, out.stdout + out.stderr);
      assert.doesNotMatch(got.output, / made$/m, `${JSON.stringify(env)}: ${got.output}`);
      assert.equal(mq('exists'), 'True', `${JSON.stringify(env)}: the host's queue was removed`);
      assert.equal(mqNamed('exists', queue + '-run'), 'False', `${JSON.stringify(env)}: the run made a queue in the host's namespace`);
      assert.equal(hint(), hintBefore, `${JSON.stringify(env)}: the host file's write hint changed`);
      assert.ok(got.denials.some((d) => d.detail === 'fcntl(F_SET_RW_HINT)'), JSON.stringify(got.denials));
      if (Object.keys(env).length) {
        assert.ok(got.denials.some((d) => d.detail === 'mq_unlink'), JSON.stringify(got.denials));
        assert.ok(got.denials.some((d) => d.detail === 'mq_open'), JSON.stringify(got.denials));
      }
    }
  } finally {
    mq('unlink');
    mqNamed('unlink', queue + '-run');
  }
});

// System V IPC objects are numbers any process can list and use as far as their modes allow, and
// Landlock does not cover them. Without an IPC namespace of its own a run wrote into the host's
// shared memory, set its semaphores, drained and removed its queues. The run's own objects must keep
// working, and go when it ends (as its namespace's would).
const SYSV = `import ctypes, json, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
IPC_CREAT, IPC_NOWAIT, IPC_RMID, SHM_RDONLY, GETVAL, SETVAL = 0o1000, 0o4000, 0, 0o10000, 12, 16
def failed(p): return p is None or p == ctypes.c_void_p(-1).value
def ids(kind, key):
    for line in open("/proc/sysvipc/" + kind).read().splitlines()[1:]:
        f = line.split()
        if int(f[0]) == key: return int(f[1])
    return None
`;

function sysvHost(what, arg) {
  const code = `${SYSV}
key = int(sys.argv[2])
if sys.argv[1] == "create":
    shm = libc.shmget(key, 4096, IPC_CREAT | 0o600)
    p = libc.shmat(shm, None, 0); ctypes.memmove(p, b"host data", 9); libc.shmdt(ctypes.c_void_p(p))
    sem = libc.semget(key, 1, IPC_CREAT | 0o600); libc.semctl(sem, 0, SETVAL, 7)
    msg = libc.msgget(key, IPC_CREAT | 0o600)
    libc.msgsnd(msg, struct.pack("l", 1) + b"host message", 12, IPC_NOWAIT)
    print(json.dumps({"shm": shm, "sem": sem, "msg": msg}))
elif sys.argv[1] == "state":
    shm, sem, msg = ids("shm", key), ids("sem", key), ids("msg", key)
    data = None
    if shm is not None:
        p = libc.shmat(shm, None, SHM_RDONLY); data = ctypes.string_at(p, 9).decode("latin1"); libc.shmdt(ctypes.c_void_p(p))
    qnum = None
    if msg is not None:
        for line in open("/proc/sysvipc/msg").read().splitlines()[1:]:
            f = line.split()
            if int(f[1]) == msg: qnum = int(f[4])
    val = libc.semctl(sem, 0, GETVAL) if sem is not None else None
    print(json.dumps({"shm": shm, "data": data, "sem": sem, "value": val, "msg": msg, "messages": qnum}))
elif sys.argv[1] == "any":
    print(json.dumps([ids(k, key) for k in ("shm", "sem", "msg")]))
else:
    for kind, ctl in (("shm", libc.shmctl), ("msg", libc.msgctl)):
        i = ids(kind, key)
        if i is not None: ctl(i, IPC_RMID, None)
    i = ids("sem", key)
    if i is not None: libc.semctl(i, 0, IPC_RMID)
    print("null")
`;
  const out = spawnSync('python3', ['-c', code, what, String(arg)], { encoding: 'utf8' });
  assert.equal(out.status, 0, out.stderr);
  return JSON.parse(out.stdout);
}

test('without an IPC namespace of its own, a run changes no System V object of the host\'s, and its own work and go with it', when(noSandbox, noPython), async () => {
  const dir = fs.realpathSync(tempDir());
  const hostKey = 0x5a000000 + (process.pid % 0x10000);
  const ownKey = hostKey + 0x10000;
  const host = sysvHost('create', hostKey);
  const before = sysvHost('state', hostKey);
  assert.equal(before.data, 'host data');
  try {
    const attack = py([
      SYSV,
      `HOST_KEY, OWN_KEY, SHM, SEM, MSG = ${hostKey}, ${ownKey}, ${host.shm}, ${host.sem}, ${host.msg}`,
      'def say(name, ok): print(name, "made" if ok else f"refused {ctypes.get_errno()}")',
      'p = libc.shmat(SHM, None, 0)',
      'if not failed(p): ctypes.memmove(p, b"PWNED", 5)',
      'say("shmat", not failed(p))',
      'by_key = libc.shmget(HOST_KEY, 0, 0)',
      'say("shmget", by_key >= 0)',
      'say("shmget-create", libc.shmget(HOST_KEY, 4096, IPC_CREAT | 0o600) >= 0)',
      'say("shmctl-rmid", libc.shmctl(SHM, IPC_RMID, None) == 0)',
      'say("semctl-setval", libc.semctl(SEM, 0, SETVAL, 42) == 0)',
      'say("semop", libc.semop(SEM, struct.pack("HhH", 0, 5, IPC_NOWAIT), 1) == 0)',
      'say("semctl-rmid", libc.semctl(SEM, 0, IPC_RMID) == 0)',
      'buf = ctypes.create_string_buffer(64)',
      'say("msgrcv", libc.msgrcv(MSG, buf, 32, 0, IPC_NOWAIT) >= 0)',
      'say("msgsnd", libc.msgsnd(MSG, struct.pack("l", 1) + b"run", 3, IPC_NOWAIT) == 0)',
      'say("msgctl-rmid", libc.msgctl(MSG, IPC_RMID, None) == 0)',
      // The run's own: a private segment, a keyed set, a queue.
      'own = libc.shmget(0, 4096, IPC_CREAT | 0o600)',
      'q = libc.shmat(own, None, 0)',
      'ok = not failed(q) and (ctypes.memmove(q, b"run data", 8) or True) and ctypes.string_at(q, 8) == b"run data"',
      'print("own shm", ok)',
      'sem = libc.semget(OWN_KEY, 1, IPC_CREAT | 0o600)',
      'print("own sem", sem >= 0 and libc.semop(sem, struct.pack("HhH", 0, 3, 0), 1) == 0 and libc.semctl(sem, 0, GETVAL) == 3 and libc.semget(OWN_KEY, 1, 0o600) == sem)',
      'msg = libc.msgget(0, IPC_CREAT | 0o600)',
      'print("own msg", msg >= 0 and libc.msgsnd(msg, struct.pack("l", 1) + b"mine", 4, 0) == 0 and libc.msgrcv(msg, buf, 32, 0, IPC_NOWAIT) == 4)',
      'print("visible", ids("sem", OWN_KEY) is not None)',
    ]);
    const modes = [['no PID namespace', { AGENT_EXEC_NO_PID_NAMESPACE: '1' }], ['no mount namespace', { AGENT_EXEC_NO_MOUNT_NAMESPACE: '1' }], ['default', {}]];
    for (const [mode, env] of modes) {
      const script = `
        const api = require(${JSON.stringify(path.join(__dirname, '..', 'js', 'index.js'))});
        api.exec({ command: ${JSON.stringify(attack)}, cwd: ${JSON.stringify(dir)}, sandbox: { writableRoots: [${JSON.stringify(dir)}] } })
          .then((r) => console.log(JSON.stringify({ output: r.output, denials: r.sandbox.denials, mechanisms: r.sandbox.mechanisms })), (e) => console.log(JSON.stringify({ error: e.message })));`;
      const out = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 60000, env: { ...process.env, ...env } });
      const got = JSON.parse(out.stdout.trim().split('\n').pop() || 'null');
      assert.ok(got && got.output !== undefined, `${mode}: ${out.stdout}${out.stderr}`);
      // (With a namespace of its own, the host's key makes the run's own object there.)
      const reached = mode === 'default' ? got.output.replace(/^shmget-create made$/m, '') : got.output;
      assert.doesNotMatch(reached, / made$/m, `${mode}: ${got.output}`);
      for (const own of ['own shm', 'own sem', 'own msg']) {
        assert.match(got.output, new RegExp(`^${own} True$`, 'm'), `${mode}: ${got.output}`);
      }
      assert.deepEqual(sysvHost('state', hostKey), before, `${mode}: the host's objects changed\n${got.output}`);
      const shared = /visible True/.test(got.output);
      if (mode !== 'default') {
        assert.ok(shared, `${mode}: the run should share the host's IPC (no namespace): ${got.output}`);
        // (glibc's semop is the kernel's semtimedop.)
        for (const detail of ['shmat', 'shmget', 'shmctl', 'semctl', 'sem(timed)?op', 'msgrcv', 'msgsnd', 'msgctl']) {
          assert.ok(got.denials.some((d) => d.operation === 'ipc' && new RegExp(`^${detail}\\(`).test(d.detail)), `${mode}: no ${detail} denial in ${JSON.stringify(got.denials)}`);
        }
      }
      // What the run made goes with it.
      await waitFor(() => sysvHost('any', ownKey).every((id) => id === null), { what: `${mode}: the run's keyed semaphore set removed after the run` });
    }
  } finally {
    sysvHost('remove', hostKey);
    sysvHost('remove', ownKey);
  }
});

// Without a mount namespace a run has no devpts of its own: its /dev/ptmx is the host's, and the
// machine's pool of ptys is one (kernel.pty.max). A run opening it in a loop left the host's next
// openpty failing. The run now stops where the kernel's own reserve for the host begins.
test('without a devpts of its own, a run cannot take the machine\'s last ptys', when(noSandbox, noPython), () => {
  const dir = fs.realpathSync(tempDir());
  const read = (name) => Number(fs.readFileSync(`/proc/sys/kernel/pty/${name}`, 'utf8'));
  const max = read('max');
  const kept = Math.min(read('reserve'), Math.floor(max / 4));
  const hog = py([
    'import os, resource',
    'soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)',
    'resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))',
    'fds = []',
    'while True:',
    '    try:',
    '        fds.append(os.open("/dev/ptmx", os.O_RDWR | os.O_NOCTTY))',
    '    except OSError as e:',
    '        nr = int(open("/proc/sys/kernel/pty/nr").read())',
    '        print("stopped", e.errno, len(fds), nr)',
    '        break',
  ]);
  const script = `
    const api = require(${JSON.stringify(path.join(__dirname, '..', 'js', 'index.js'))});
    api.exec({ command: ${JSON.stringify(hog)}, cwd: ${JSON.stringify(dir)}, sandbox: { writableRoots: [${JSON.stringify(dir)}], limits: { openFiles: ${max + 512} } } })
      .then((r) => console.log(JSON.stringify({ output: r.output, denials: r.sandbox.denials })), (e) => console.log(JSON.stringify({ error: e.message })));`;
  const out = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 120000, env: { ...process.env, AGENT_EXEC_NO_MOUNT_NAMESPACE: '1' } });
  const got = JSON.parse(out.stdout.trim().split('\n').pop() || 'null');
  assert.ok(got && got.output !== undefined, out.stdout + out.stderr);
  const m = /^stopped (\d+) (\d+) (\d+)$/m.exec(got.output);
  assert.ok(m, got.output);
  const [errno, opened, nr] = m.slice(1).map(Number);
  assert.equal(errno, 28, `ENOSPC expected: ${got.output}`);
  assert.ok(opened > 0, 'the run opens ptys of its own');
  // What was left for the host when the run stopped (a little slack for other programs' ptys).
  assert.ok(max - nr >= kept - 16, `${max - nr} ptys were left of ${max}, ${kept} are kept for the host: ${got.output}`);
  assert.ok(got.denials.some((d) => d.path === '/dev/ptmx' && /pty pool/.test(d.rule)), JSON.stringify(got.denials));
});
