'use strict';
// What a sandboxed run may not read or write beyond its roots' defaults (issue 34, items 2 and 3): the
// credential locations of every home it can name are hidden, `denyRead` hides more, `allowRead` brings
// paths back, `denyWrite` keeps paths and globs inside the roots read-only, and the files that make
// tools run code stay protected at the top of every root. Each test reads or writes from inside and
// checks from outside that the files are there and unchanged. Root and normal user (CI's second pass).

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const { native, killTracked, tempDir, run } = require('./helpers.js');

test.after(killTracked);

const caps = native.sandboxCapabilities();
const noSandbox = !caps.enforceable && `this host cannot sandbox: ${caps.problems.join('; ')}`;
const noHiding = !caps.denyRead && 'this host cannot give a run a mount namespace, so nothing can be hidden from reads';
const when = (...reasons) => ({ skip: reasons.find(Boolean) || false });

/** A home directory with a secret in each default location, and what each holds. */
function homeWithSecrets() {
  const home = fs.realpathSync(tempDir('agent-exec-home-'));
  const secrets = {
    '.ssh/id_ed25519': 'ssh-private-key',
    '.aws/credentials': 'aws-secret',
    '.config/gcloud/credentials.db': 'gcloud-secret',
    '.gnupg/private-keys-v1.d/k.key': 'gpg-secret',
    '.kube/config': 'kube-secret',
    '.docker/config.json': 'docker-secret',
    '.netrc': 'netrc-secret',
    '.git-credentials': 'git-credential-secret',
    '.npmrc': 'npm-token-secret',
    '.pypirc': 'pypi-secret',
    '.config/gh/hosts.yml': 'gh-secret',
    '.password-store/x.gpg': 'pass-secret',
    '.mozilla/firefox/p/cookies.sqlite': 'cookie-secret',
    '.config/git/credentials': 'git-store-secret',
    '.pgpass': 'pg-secret',
    '.my.cnf': 'mysql-secret',
    '.config/Bitwarden CLI/data.json': 'bitwarden-secret',
  };
  for (const [rel, content] of Object.entries(secrets)) {
    fs.mkdirSync(path.dirname(path.join(home, rel)), { recursive: true });
    fs.writeFileSync(path.join(home, rel), content);
  }
  fs.writeFileSync(path.join(home, '.ssh', 'known_hosts'), 'github.com ssh-ed25519 AAAA');
  fs.mkdirSync(path.join(home, 'project'));
  return { home, secrets };
}

test('the credential locations of the run\'s home are unreadable inside and intact outside', when(noSandbox, noHiding), async () => {
  const { home, secrets } = homeWithSecrets();
  const cwd = path.join(home, 'project');
  // By ~ (the run's HOME), by absolute path, by listing, by a link planted in the project.
  fs.symlinkSync(path.join(home, '.aws', 'credentials'), path.join(cwd, 'link-to-aws'));
  const reads = Object.keys(secrets).map((rel) => `cat ~/${rel} 2>/dev/null; cat ${path.join(home, rel)} 2>/dev/null`);
  const r = await run({
    command: [...reads, 'ls -R ~/.ssh ~/.aws 2>/dev/null', 'cat link-to-aws 2>/dev/null', 'cp -r ~/.ssh ./copied 2>/dev/null', 'echo end'].join('; '),
    cwd,
    env: { HOME: home },
    sandbox: { writableRoots: [cwd] },
  });
  assert.match(r.output, /end\n$/);
  for (const content of Object.values(secrets)) assert.doesNotMatch(r.output, new RegExp(content), `${content} was read inside`);
  assert.doesNotMatch(r.output, /id_ed25519|known_hosts/, 'a hidden directory was listed');
  assert.equal(fs.existsSync(path.join(cwd, 'copied', 'id_ed25519')), false);
  assert.ok(r.sandbox.mechanisms.some((m) => /credential or denyRead paths? hidden/.test(m)), r.sandbox.mechanisms.join());
  // Outside, everything is there as it was.
  for (const [rel, content] of Object.entries(secrets)) assert.equal(fs.readFileSync(path.join(home, rel), 'utf8'), content);
  // Unsandboxed, the same command reads them (the test's reads are real).
  const plain = await run({ command: `cat ${path.join(home, '.aws', 'credentials')}`, cwd });
  assert.equal(plain.output, 'aws-secret');
});

test('credential files the host replaces or makes while a run lives stay unreadable to it', when(noSandbox), async () => {
  const { home } = homeWithSecrets();
  const cwd = path.join(home, 'project');
  fs.writeFileSync(path.join(home, '.gitconfig'), '[user]\n\tname = ordinary\n');
  const go = path.join(cwd, 'go');
  // The run reads what it may, waits for the host (15 s at most), then reads what appeared.
  const command = [
    'cat ~/.gitconfig',
    'head -c 5 /proc/self/status; echo',
    'head -c 1 /dev/urandom >/dev/null && echo urandom-read',
    'echo tmp-data > "$TMPDIR/t" && cat "$TMPDIR/t"',
    'echo project-data > p && cat p',
    `for i in $(seq 300); do [ -e ${go} ] && break; sleep 0.05; done`,
    'echo after:',
    'cat ~/.git-credentials ~/.vault-token ~/.aws/new-credentials ~/later.txt ~/.config/gh/new.yml 2>/dev/null',
    'echo end',
  ].join('; ');
  const running = run({ command, cwd, env: { HOME: home }, sandbox: { writableRoots: [cwd] } });
  // Once the run is waiting: replace a hidden file by a rename (as git credential-store and editors
  // do), make new ones where credentials live, and an ordinary file beside them.
  await new Promise((r) => setTimeout(r, 500));
  fs.writeFileSync(path.join(home, '.git-credentials.new'), 'replaced-secret');
  fs.renameSync(path.join(home, '.git-credentials.new'), path.join(home, '.git-credentials'));
  fs.writeFileSync(path.join(home, '.vault-token'), 'vault-secret');
  fs.writeFileSync(path.join(home, '.aws', 'new-credentials'), 'new-aws-secret');
  fs.writeFileSync(path.join(home, '.config', 'gh', 'new.yml'), 'new-gh-secret');
  fs.writeFileSync(path.join(home, 'later.txt'), 'later-file');
  fs.writeFileSync(go, '');
  const r = await running;
  assert.match(r.output, /name = ordinary/);
  assert.match(r.output, /Name:/);
  assert.match(r.output, /urandom-read/);
  assert.match(r.output, /tmp-data/);
  assert.match(r.output, /project-data/);
  assert.match(r.output, /after:\nend\n$/, r.output);
  for (const secret of ['replaced-secret', 'vault-secret', 'new-aws-secret', 'new-gh-secret', 'later-file']) {
    assert.doesNotMatch(r.output, new RegExp(secret));
  }
  assert.ok(r.sandbox.mechanisms.some((m) => /unreadable by Landlock too/.test(m)), r.sandbox.mechanisms.join());
  // The next run, started after the changes, reads the ordinary file (it was there when it started).
  const next = await run({ command: 'cat ~/later.txt; cat ~/.vault-token 2>/dev/null; echo', cwd, env: { HOME: home }, sandbox: { writableRoots: [cwd] } });
  assert.equal(next.output, 'later-file\n');
  // With the home itself a writable root, what the run makes there it reads back.
  const own = await run({ command: 'echo mine > ~/made-here && cat ~/made-here', cwd: home, env: { HOME: home }, sandbox: { writableRoots: [home] } });
  assert.equal(own.output, 'mine\n');
});

/** Another person's home on this machine (a regular account's, not this process's), if any. */
function otherPersonsHome() {
  const mine = os.userInfo();
  for (const line of fs.readFileSync('/etc/passwd', 'utf8').split('\n')) {
    const [, , uid, , , home] = line.split(':');
    const id = Number(uid);
    if (!(id >= 1000 && id !== 65534) || id === mine.uid || !home || home === mine.homedir) continue;
    try {
      if (fs.statSync(home).isDirectory()) return home;
    } catch {}
  }
  return undefined;
}

const isRoot = process.getuid() === 0;
const otherHome = isRoot ? otherPersonsHome() : undefined;
const noOtherHome = !isRoot ? 'putting a file into another account\'s home needs root' : !otherHome && 'no other regular account with a home on this machine';

test('another person\'s credentials left world-readable are hidden too', when(noSandbox, noHiding, noOtherHome), async (t) => {
  // A credential file npm would write with the umask's 0644, in a place the account does not use yet.
  const name = ['.npmrc', '.netrc', '.git-credentials', '.pypirc'].find((n) => !fs.existsSync(path.join(otherHome, n)));
  if (!name) return t.skip(`${otherHome} already holds every candidate file`);
  const file = path.join(otherHome, name);
  fs.writeFileSync(file, 'other-persons-token\n', { mode: 0o644 });
  t.after(() => fs.rmSync(file, { force: true }));
  const cwd = fs.realpathSync(tempDir());
  const r = await run({ command: `cat ${file} 2>/dev/null; echo end`, cwd, sandbox: { writableRoots: [cwd] } });
  assert.equal(r.output, 'end\n');
  // Readable without the sandbox (world-readable), and intact.
  assert.equal((await run({ command: `cat ${file}`, cwd })).output, 'other-persons-token\n');
});

test('allowRead brings a path back inside a hidden directory; denyRead hides more, ~ and relative paths too', when(noSandbox, noHiding), async () => {
  const { home } = homeWithSecrets();
  const cwd = path.join(home, 'project');
  fs.writeFileSync(path.join(cwd, '.env'), 'DB_PASSWORD=hunter2');
  fs.mkdirSync(path.join(cwd, 'secrets', 'deep'), { recursive: true });
  fs.writeFileSync(path.join(cwd, 'secrets', 'deep', 'token'), 'deep-token');
  fs.writeFileSync(path.join(cwd, 'readme.txt'), 'public');
  const r = await run({
    command: 'cat ~/.ssh/known_hosts; cat ~/.ssh/id_ed25519 2>/dev/null; cat .env 2>/dev/null; cat secrets/deep/token 2>/dev/null; cat readme.txt; echo; { echo x >> .env; } 2>/dev/null || echo env-not-writable',
    cwd,
    env: { HOME: home },
    sandbox: { writableRoots: [cwd], allowRead: [path.join(home, '.ssh', 'known_hosts')], denyRead: ['.env', 'secrets'] },
  });
  assert.match(r.output, /^github\.com ssh-ed25519 AAAA/);
  assert.doesNotMatch(r.output, /ssh-private-key|hunter2|deep-token/);
  assert.match(r.output, /public\nenv-not-writable\n$/);
  assert.equal(fs.readFileSync(path.join(cwd, '.env'), 'utf8'), 'DB_PASSWORD=hunter2');
  // allowRead of a whole default location: readable again.
  const aws = await run({ command: 'cat ~/.aws/credentials', cwd, env: { HOME: home }, sandbox: { writableRoots: [cwd], allowRead: [path.join(home, '.aws')] } });
  assert.equal(aws.output, 'aws-secret');
});

test('denyRead without a mount namespace is refused with a typed error, never ignored', when(noSandbox), () => {
  const script = `
    const api = require(${JSON.stringify(path.join(__dirname, '..', 'js', 'index.js'))});
    api.exec({ command: 'true', sandbox: { denyRead: ['/etc/hostname'] } })
      .then((r) => console.log('ran', JSON.stringify(r.sandbox && r.sandbox.mechanisms)), (e) => console.log(e.code, e.message));`;
  const out = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 30000, env: { ...process.env, AGENT_EXEC_NO_MOUNT_NAMESPACE: '1' } });
  assert.match(out.stdout, /^ERR_SANDBOX_UNAVAILABLE .*denyRead needs a mount namespace/, out.stdout + out.stderr);
});

test('denyWrite keeps paths and globs inside the roots read-only, and names each refusal', when(noSandbox), async () => {
  const cwd = fs.realpathSync(tempDir());
  fs.writeFileSync(path.join(cwd, '.env'), 'KEEP=1');
  fs.mkdirSync(path.join(cwd, 'secrets'));
  fs.writeFileSync(path.join(cwd, 'secrets', 'a.txt'), 'a');
  const r = await run({
    command: [
      'echo over > .env',
      'rm -f .env',
      'echo new > secrets/b.txt',
      'rm secrets/a.txt',
      'echo key > server.pem',
      'mkdir -p sub && echo key > sub/nested.pem',
      'echo fine > notes.txt',
      'echo done',
    ].map((c) => `{ ${c}; } 2>/dev/null`).join('; '),
    cwd,
    sandbox: { writableRoots: [cwd], denyWrite: ['.env', 'secrets/**', '**/*.pem'] },
  });
  assert.match(r.output, /done\n$/);
  assert.equal(fs.readFileSync(path.join(cwd, '.env'), 'utf8'), 'KEEP=1');
  assert.equal(fs.existsSync(path.join(cwd, 'secrets', 'b.txt')), false);
  assert.equal(fs.readFileSync(path.join(cwd, 'secrets', 'a.txt'), 'utf8'), 'a');
  assert.equal(fs.existsSync(path.join(cwd, 'server.pem')), false);
  assert.equal(fs.existsSync(path.join(cwd, 'sub', 'nested.pem')), false);
  assert.equal(fs.readFileSync(path.join(cwd, 'notes.txt'), 'utf8'), 'fine\n');
  const rules = r.sandbox.denials.map((d) => `${d.path} ${d.rule}`);
  assert.ok(rules.some((x) => x === `${path.join(cwd, 'server.pem')} protected path ${path.join(cwd, '**/*.pem')}`), rules.join('\n'));
  assert.ok(rules.some((x) => x.startsWith(path.join(cwd, 'secrets', 'b.txt'))), rules.join('\n'));
  await assert.rejects(native.exec({ command: 'true', cwd, sandbox: { denyWrite: ['[unclosed'] } }), { code: 'ERR_INVALID_OPTION', message: /denyWrite has "\[unclosed", which is not a valid glob/ });
  await assert.rejects(native.exec({ command: 'true', cwd, sandbox: { denyRead: 'x' } }), { code: 'ERR_INVALID_OPTION', message: /sandbox\.denyRead must be an array of paths/ });
});

test('the files that make tools run code stay protected at the top of every root', when(noSandbox), async () => {
  const cwd = fs.realpathSync(tempDir());
  const planted = [
    '.cursor/mcp.json', '.npmrc', '.gitconfig', '.bashrc', '.zshrc', '.profile', '.yarnrc.yml', '.vscode/tasks.json', '.claude/settings.json',
    // Package managers' hooks and the program they run instead of themselves; other agents' and editors' settings.
    '.yarnrc', '.pnpmfile.cjs', 'bunfig.toml', '.mise.toml', 'lefthook.yml', '.zed/tasks.json', '.gemini/settings.json', 'opencode.json', '.hg/hgrc', '.cargo/config.toml',
  ];
  const r = await run({
    command: planted.map((p) => `{ mkdir -p $(dirname ${p}); echo planted > ${p}; } 2>/dev/null`).join('; ') + '; echo done',
    cwd,
    sandbox: { writableRoots: [cwd] },
  });
  assert.match(r.output, /done\n$/);
  for (const p of planted) assert.equal(fs.existsSync(path.join(cwd, p)), false, `${p} was planted`);
  const refused = new Set(r.sandbox.denials.map((d) => d.path));
  for (const p of ['.npmrc', '.gitconfig', '.bashrc', '.yarnrc', '.pnpmfile.cjs', 'bunfig.toml']) assert.ok(refused.has(path.join(cwd, p)), `${p} refused without a record`);
});

test('tool configs found by walking up (rust-toolchain, .cargo, .npmrc...) stay the host\'s at any depth of its directories, and are the run\'s in its own', when(noSandbox), async () => {
  const cwd = fs.realpathSync(tempDir());
  // The host's nested crate and package, as a monorepo has them.
  for (const d of ['crates/foo', 'packages/web', 'vendor/lib']) fs.mkdirSync(path.join(cwd, d), { recursive: true });
  fs.mkdirSync(path.join(cwd, 'crates/foo/.cargo'));
  fs.writeFileSync(path.join(cwd, 'crates/foo/.cargo/config.toml'), '[build]\n');
  fs.writeFileSync(path.join(cwd, 'crates/foo/rust-toolchain.toml'), '[toolchain]\nchannel = "stable"\n');
  fs.mkdirSync(path.join(cwd, 'vendor/lib/.hg'));
  const planted = [
    'crates/foo/rust-toolchain.toml', 'crates/foo/rust-toolchain', 'crates/foo/.cargo/config.toml', 'crates/foo/.cargo/config',
    'packages/web/.npmrc', 'packages/web/.yarnrc.yml', 'packages/web/.yarnrc', 'packages/web/bunfig.toml', 'packages/web/.pnpmfile.cjs',
    'packages/web/.tool-versions', 'packages/web/mise.toml', 'packages/web/.mise/config.toml', 'vendor/lib/.hg/hgrc',
  ];
  const plant = planted.map((p) => `{ mkdir -p $(dirname ${p}); echo 'path = "/tmp/evil"' > ${p}; } 2>/dev/null`);
  const r = await run({
    command: [
      ...plant,
      // A link named .cargo would put the config elsewhere; a directory moved there likewise.
      'ln -s ../x packages/web/.cargo 2>/dev/null',
      'mkdir -p mv-src && echo x > mv-src/config.toml && mv mv-src packages/web/.cargo 2>/dev/null',
      // In directories the run makes: its own crate, and a clone with a pinned toolchain.
      'mkdir -p newcrate/.cargo && echo "[toolchain]" > newcrate/rust-toolchain.toml && echo "[build]" > newcrate/.cargo/config.toml',
      // A directory of the host's is not moved under one the run made (a config there would apply).
      'mkdir -p runs && python3 -c "import os\ntry: os.rename(\'crates/foo\', \'runs/foo\'); print(\'moved\')\nexcept OSError as e: print(\'rename\', e.errno)"',
      'echo done',
    ].join('; '),
    cwd,
    sandbox: { writableRoots: [cwd] },
  });
  assert.match(r.output, /done\n$/);
  assert.match(r.output, /^rename 18$/m, r.output);
  assert.equal(fs.existsSync(path.join(cwd, 'crates/foo/Cargo.toml')) || fs.existsSync(path.join(cwd, 'crates/foo')), true);
  assert.equal(fs.readFileSync(path.join(cwd, 'crates/foo/.cargo/config.toml'), 'utf8'), '[build]\n');
  assert.equal(fs.readFileSync(path.join(cwd, 'crates/foo/rust-toolchain.toml'), 'utf8'), '[toolchain]\nchannel = "stable"\n');
  for (const p of planted.filter((p) => !p.startsWith('crates/foo/.cargo/config.toml') && p !== 'crates/foo/rust-toolchain.toml')) {
    assert.equal(fs.existsSync(path.join(cwd, p)), false, `${p} was planted`);
  }
  assert.equal(fs.existsSync(path.join(cwd, 'packages/web/.cargo')), false, 'a link or directory named .cargo was made');
  const refused = r.sandbox.denials.map((d) => `${d.path} ${d.rule}`).join('\n');
  assert.match(refused, /rust-toolchain\.toml in .*crates\/foo, a directory of the host's/);
  assert.match(refused, /\.npmrc in .*packages\/web/);
  // The run's own directories are its own.
  assert.equal(fs.readFileSync(path.join(cwd, 'newcrate/rust-toolchain.toml'), 'utf8'), '[toolchain]\n');
  assert.equal(fs.readFileSync(path.join(cwd, 'newcrate/.cargo/config.toml'), 'utf8'), '[build]\n');
});

test('with $HOME inside a root, what the user\'s next python3, git or cloud CLI loads from it stays the host\'s', when(noSandbox, spawnSync('python3', ['-c', '1']).status !== 0 && 'python3 is not installed'), async () => {
  const home = fs.realpathSync(tempDir('agent-exec-home-root-'));
  const canary = path.join(fs.realpathSync(tempDir('agent-exec-home-canary-')), 'ran');
  // The user's site-packages of the host's own python3, as the host would resolve it with this HOME.
  const site = spawnSync('python3', ['-c', 'import site; print(site.getusersitepackages())'], { encoding: 'utf8', env: { PATH: process.env.PATH, HOME: home } }).stdout.trim();
  assert.ok(site.startsWith(home), site);
  const rel = path.relative(home, site);
  const plants = {
    [`${rel}/usercustomize.py`]: `open(${JSON.stringify(canary)}, "a").write("usercustomize\\n")`,
    [`${rel}/evil.pth`]: `import os; open(${JSON.stringify(canary)}, "a").write("pth\\n")`,
    '.cargo/bin/git': `#!/bin/sh\necho cargo-bin >> ${canary}\n`,
    '.local/share/systemd/user/evil.service': '[Service]\nExecStart=/bin/true\n',
    '.docker/config.json': '{"credsStore":"evil"}',
    '.kube/config': 'users: []',
    '.aws/config': '[default]\ncredential_process = /bin/true',
    '.pyenv/shims/python': '#!/bin/sh\n',
    '.cargo/env': `echo cargo-env >> ${canary}`,
    '.config/gdb/gdbinit': `shell echo gdbinit >> ${canary}`,
    '.config/tmux/tmux.conf': `run-shell "echo tmux >> ${canary}"`,
    '.gitconfig.local': '[core]\n\tfsmonitor = evil\n',
    // less's start-up file (LESSOPEN ran in the host's git log), hg's, gpg-agent's (before .gnupg
    // exists), pip's index, and the caches whose code the host's pre-commit and npx run.
    '.lesskey': `#env\nLESSOPEN = |sh -c "echo less >> ${canary}" %s`,
    '.hgrc': '[hooks]\npre-status = evil',
    '.gnupg/gpg-agent.conf': 'pinentry-program /tmp/evil',
    '.pip/pip.conf': '[global]\nindex-url = http://evil',
    '.cache/pre-commit/repo/hook.sh': 'evil',
    '.npm/_npx/x/package.json': '{}',
  };
  // The user's global config includes a file beside it: what it names is the host's too.
  fs.writeFileSync(path.join(home, '.gitconfig'), '[include]\n\tpath = ~/.gitconfig.local\n');
  const r = await run({
    command: [
      ...Object.entries(plants).map(([p, text]) => `{ mkdir -p "$(dirname '${p}')" && printf '%s' '${text}' > '${p}'; } 2>/dev/null`),
      'echo done',
    ].join('; '),
    cwd: home,
    env: { HOME: home },
    sandbox: { writableRoots: [home] },
  });
  assert.match(r.output, /done\n$/, r.output);
  for (const p of Object.keys(plants)) assert.equal(fs.existsSync(path.join(home, p)), false, `${p} was planted`);
  // The host's own python3 and git, with this HOME and its ~/.cargo/bin first on PATH, run nothing planted.
  spawnSync('python3', ['-c', 'print(1)'], { env: { PATH: process.env.PATH, HOME: home } });
  spawnSync('git', ['--version'], { env: { PATH: `${path.join(home, '.cargo', 'bin')}:${process.env.PATH}`, HOME: home } });
  assert.equal(fs.existsSync(canary), false, fs.existsSync(canary) ? fs.readFileSync(canary, 'utf8') : '');
  const refused = r.sandbox.denials.map((d) => `${d.path} ${d.rule}`).join('\n');
  // A link where a protected path's parent should be would put the protected path elsewhere.
  const linked = await run({
    command: 'rm -rf .local && mkdir -p x/lib x/share && { ln -s x .local; } 2>/dev/null; { mv x .local; } 2>/dev/null; echo done',
    cwd: home,
    env: { HOME: home },
    sandbox: { writableRoots: [home] },
  });
  assert.match(linked.output, /done/, linked.output);
  assert.equal(fs.existsSync(path.join(home, '.local')) && fs.lstatSync(path.join(home, '.local')).isSymbolicLink(), false, '.local became a link');
  assert.equal(fs.existsSync(path.join(home, 'x', 'lib')), true, 'x was moved to .local whole (its lib would be .local/lib)');
  assert.match(linked.sandbox.denials.map((d) => `${d.operation} ${d.path} ${d.rule}`).join('\n'), /symlink .*\.local .*on the way to the protected path/);
  for (const entry of ['.local/lib', '.cargo/bin', '.docker', '.aws', '.config', '.cargo/env', '.gitconfig.local']) {
    assert.match(refused, new RegExp(`${path.join(home, entry).replace(/[.]/g, '\\.')}.* protected path`), refused);
  }
});

// Third outside round: the tools passed relative denyRead entries and the model's workdir (or the
// directory the last run reported) to the runtime, which read them against that directory:
// `denyRead: ['.env']` and a command in `sub/` hid `sub/.env`, and `cat ../.env` read the secret.
// A cwd inside a hidden place read what was hidden; a relative root in the MCP server's config
// followed the model's cwd (`cwd: "/"` made the whole file system writable).
test('the tools pin relative read paths to the host\'s cwd, and a cwd inside a hidden place is refused', when(noSandbox, noHiding), async () => {
  const api = require('../js/index.js');
  const proj = fs.realpathSync(tempDir('agent-exec-pin-'));
  fs.mkdirSync(path.join(proj, 'sub'));
  fs.mkdirSync(path.join(proj, 'keys'));
  fs.writeFileSync(path.join(proj, '.env'), 'ENVSECRET\n');
  fs.writeFileSync(path.join(proj, 'keys', 'id'), 'KEYSECRET\n');
  const sandbox = { denyRead: ['.env', 'keys'] };
  const exec = api.createExecTool({ cwd: proj, sandbox });
  const fromSub = await exec.execute('1', { command: 'cat ../.env ../keys/id 2>&1; echo end', workdir: path.join(proj, 'sub') });
  const out = fromSub.content[0].text;
  assert.match(out, /end/);
  assert.doesNotMatch(out, /ENVSECRET|KEYSECRET/);
  // A workdir inside a hidden place: refused, nothing read.
  const inside = await exec.execute('2', { command: 'cat id; echo end', workdir: path.join(proj, 'keys') }).then((r) => r.content[0].text, (e) => `error: ${e.code} ${e.message}`);
  assert.doesNotMatch(inside, /KEYSECRET/);
  assert.match(inside, /ERR_INVALID_CWD|hides from the command/, inside);
  // Claude Code's tools: a run that moves into sub/ leaves the next one there (tracked cwd).
  const cc = api.createClaudeCodeTools({ cwd: proj, sandbox: { filesystem: { denyRead: ['.env', 'keys'] } }, onPermissionRequest: () => 'allow' });
  try {
    await cc.bash.execute('1', { command: 'cd sub' });
    const r = await cc.bash.execute('2', { command: 'pwd; cat ../.env 2>&1; echo end' });
    const text = r.content[0].text;
    assert.match(text, /end/);
    assert.match(text, /\/sub$/m, 'the cwd was tracked');
    assert.doesNotMatch(text, /ENVSECRET/);
    // A forged report of the run's last directory, into a hidden place: the next run is refused.
    await cc.bash.execute('3', { command: `trap - EXIT; echo ${path.join(proj, 'keys')} > "$AGENT_EXEC_CWD_FILE"` });
    const forged = await cc.bash.execute('4', { command: 'cat id 2>&1; echo end' }).then((x) => x.content[0].text, (e) => `error: ${e.code} ${e.message}`);
    assert.doesNotMatch(forged, /KEYSECRET/);
  } finally {
    await cc.dispose();
  }
  // The MCP server's config: relative paths are the host's, against its cwd.
  const { readServerConfig } = require('../js/mcp/config.js');
  const cfg = path.join(proj, 'mcp.json');
  fs.writeFileSync(cfg, JSON.stringify({ cwd: proj, sandbox: { writableRoots: ['.'], denyRead: ['.env', '~/.x'] } }));
  const server = readServerConfig(['--config', cfg]).sandbox;
  assert.deepEqual(server.writableRoots, [proj]);
  assert.deepEqual(server.denyRead, [path.join(proj, '.env'), '~/.x']);
  const r = await api.exec({ command: 'touch /etc/agent-exec-pin-probe 2>&1; echo end', cwd: '/', sandbox: server });
  assert.ok(!fs.existsSync('/etc/agent-exec-pin-probe'), r.output);
});

// Fourth outside round: what the host obeys stays the host's. A run under a root holding the
// approvals file allowlisted `*` there; `host: 'node'` left a configured sandbox for the host's
// hook, unasked; a forged report of the run's last directory, into a hidden place, left every later
// command of the scope refused.
test('the approvals file, the sandbox host and the tracked directory stay the host\'s', when(noSandbox, noHiding), async () => {
  const api = require('../js/index.js');
  const proj = fs.realpathSync(tempDir('agent-exec-hostown-'));
  fs.mkdirSync(path.join(proj, 'keys'));
  fs.writeFileSync(path.join(proj, 'keys', 'id'), 'KEYSECRET\n');
  const approvals = path.join(proj, 'approvals.json');
  fs.writeFileSync(approvals, JSON.stringify({ version: 1, agents: {} }));
  const before = fs.readFileSync(approvals, 'utf8');
  const r = await api.exec({
    command: `printf '{"version":1,"agents":{"*":{"allowlist":[{"pattern":"*"}]}}}' > ${approvals}; echo done`,
    cwd: proj,
    sandbox: { writableRoots: [proj] },
    approval: { security: 'full', ask: 'off', approvalsFile: approvals },
  });
  assert.match(r.output, /done/);
  assert.equal(fs.readFileSync(approvals, 'utf8'), before, r.output);
  assert.ok(r.sandbox.denials.some((d) => d.path === approvals), JSON.stringify(r.sandbox.denials));
  // Fifth round: the tools' own configuration under a root (an exec tool's approvals file, a
  // Claude Code settings file, the MCP server's config), and the home's `bin` and corepack cache.
  const toolApprovals = path.join(proj, 'cfg', 'approvals.json');
  fs.mkdirSync(path.dirname(toolApprovals));
  fs.writeFileSync(toolApprovals, before);
  const tool = api.createExecTool({ cwd: proj, sandbox: {}, approvalsFile: toolApprovals });
  const wrote = await tool.execute('w', { command: `echo '{}' > ${toolApprovals}; echo done` });
  assert.match(wrote.content[0].text, /done/);
  assert.equal(fs.readFileSync(toolApprovals, 'utf8'), before, wrote.content[0].text);
  fs.writeFileSync(path.join(proj, 'sb.json'), JSON.stringify({ sandbox: { enabled: true } }));
  const ccFile = api.createClaudeCodeTools({ cwd: proj, settingsFile: 'sb.json', onPermissionRequest: () => 'allow' });
  try {
    await ccFile.bash.execute('s', { command: `echo '{"sandbox":{"enabled":false}}' > sb.json` });
  } finally {
    await ccFile.dispose();
  }
  assert.equal(JSON.parse(fs.readFileSync(path.join(proj, 'sb.json'), 'utf8')).sandbox.enabled, true);
  const { readServerConfig } = require('../js/mcp/config.js');
  const mcpConfig = path.join(proj, 'agent-exec.json');
  fs.writeFileSync(mcpConfig, JSON.stringify({ cwd: proj, sandbox: {} }));
  assert.ok(readServerConfig(['--config', mcpConfig]).sandbox.denyWrite.includes(mcpConfig));
  const home = path.join(proj, 'home');
  fs.mkdirSync(home);
  const planted = await api.exec({
    command: 'mkdir -p ~/bin ~/.cache/node/corepack/v1 2>&1; printf x > ~/bin/git 2>&1; echo done',
    cwd: home,
    env: { HOME: home },
    sandbox: { writableRoots: [home] },
  });
  assert.match(planted.output, /done/);
  assert.ok(!fs.existsSync(path.join(home, 'bin', 'git')), planted.output);
  assert.ok(!fs.existsSync(path.join(home, '.cache', 'node', 'corepack', 'v1')), planted.output);
  // host: 'node' with a sandbox configured is refused, and the hook never runs.
  let hooked = 0;
  const exec = api.createExecTool({ cwd: proj, sandbox: {}, runOnNode: async () => { hooked++; return { exitCode: 0, output: '' }; } });
  await assert.rejects(exec.execute('1', { command: 'true', host: 'node' }), /exec host not allowed/);
  await assert.rejects(exec.execute('2', { command: 'true', host: ' Node ' }), /exec host not allowed/);
  assert.equal(hooked, 0);
  // A forged tracked directory into a hidden place is not taken: the next command runs where the
  // last honest one ended.
  const cc = api.createClaudeCodeTools({ cwd: proj, sandbox: { filesystem: { denyRead: ['keys'] } }, onPermissionRequest: () => 'allow' });
  try {
    await cc.bash.execute('1', { command: `trap - EXIT; echo ${path.join(proj, 'keys')} > "$AGENT_EXEC_CWD_FILE"` });
    const next = await cc.bash.execute('2', { command: 'pwd; cat id 2>&1; echo end' });
    const text = next.content[0].text;
    assert.match(text, new RegExp(`^${proj}$`, 'm'), text);
    assert.match(text, /end/);
    assert.doesNotMatch(text, /KEYSECRET/);
  } finally {
    await cc.dispose();
  }
});
