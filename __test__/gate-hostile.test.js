'use strict';
// Issue 21: the hostile corpus, checked by running it. Every command of
// __test__/fixtures/hostile-commands.txt goes through `exec` under each policy kind, with a callback
// that records it was asked and denies. Each payload touches `canary` or removes `victim` in a temp
// dir built to be hostile (a git repo whose config runs a payload, a `cat` that is `touch`, files
// named like options); afterwards the canary must not exist and the victim must, unless the
// callback was asked (then nothing ran, since it denied).

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const { native, track, killTracked, tempDir, watchSpawns } = require('./helpers.js');

test.after(killTracked);

/** The corpus: one command a line, JSON strings for commands with newlines, `#` lines skipped. */
function loadCorpus() {
  const text = fs.readFileSync(path.join(__dirname, 'fixtures', 'hostile-commands.txt'), 'utf8');
  const commands = [];
  let section = '';
  for (const line of text.split('\n')) {
    if (line.startsWith('## ')) section = line.slice(3);
    else if (line.startsWith('#') || line.trim() === '') continue;
    else commands.push({ section, command: line.startsWith('"') ? JSON.parse(line) : line });
  }
  return commands;
}

function exe(file, body) {
  fs.writeFileSync(file, body);
  fs.chmodSync(file, 0o755);
}

/**
 * A repository at `at` with one file committed, whose time then differs from the index's (its content
 * does not): the next `git status` refreshes the index, which runs `post-index-change`.
 */
function committedRepo(at) {
  fs.mkdirSync(at);
  const git = (...args) =>
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: at, stdio: 'ignore', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: '/nonexistent' } });
  git('init', '-q');
  fs.writeFileSync(path.join(at, 'f'), 'x\n');
  git('add', 'f');
  git('commit', '-q', '-m', 'x');
  fs.utimesSync(path.join(at, 'f'), new Date(2000, 0, 1), new Date(2000, 0, 1));
  return at;
}

/** The attacker's workspace. Returns its path. */
function hostileDir() {
  const dir = tempDir('agent-exec-hostile-');
  const canary = path.join(dir, 'canary');
  const victim = path.join(dir, 'victim');
  const payload = `#!/bin/sh\ntouch '${canary}'\nexit 0\n`;
  const touch = execFileSync('/bin/sh', ['-c', 'command -v touch'], { encoding: 'utf8' }).trim();
  const rm = execFileSync('/bin/sh', ['-c', 'command -v rm'], { encoding: 'utf8' }).trim();
  exe(path.join(dir, 'payload.sh'), payload);
  fs.writeFileSync(path.join(dir, 'payload.js'), `require('fs').writeFileSync(${JSON.stringify(canary)}, '')\n`);
  fs.writeFileSync(path.join(dir, 'payload.py'), `open(${JSON.stringify(canary)}, 'w')\n`);
  fs.writeFileSync(path.join(dir, 'in.txt'), 'a\nx\n');
  fs.writeFileSync(path.join(dir, 'script.sed'), 'w canary\n');
  fs.writeFileSync(path.join(dir, 'prog.awk'), 'BEGIN { system("touch canary") }\n');
  fs.writeFileSync(path.join(dir, 'rm.sh'), `rm -f '${victim}'\n`);
  fs.writeFileSync(path.join(dir, 'rgrc'), `--pre=${path.join(dir, 'payload.sh')}\n`);
  // Data that sort spills in chunks through its --compress-program (the last line is the payload).
  const padding = Array.from({ length: 3000 }, (_, i) => `: padding line ${i} ${'x'.repeat(40)}`);
  fs.writeFileSync(path.join(dir, 'sortdata'), `${padding.join('\n')}\nx=m; r$x -f victim; touch canary\n`);
  // Names that lie: executables and symlinks named like read-only tools.
  for (const d of ['bin', 'deep/bin']) fs.mkdirSync(path.join(dir, d), { recursive: true });
  fs.symlinkSync('deep/bin', path.join(dir, 'link'));
  for (const base of [dir, path.join(dir, 'bin'), path.join(dir, 'deep'), path.join(dir, 'deep/bin')]) {
    fs.symlinkSync(touch, path.join(base, 'cat'));
    fs.symlinkSync(rm, path.join(base, 'del'));
    fs.symlinkSync(rm, path.join(base, 'rm'));
    // `PATH=./bin:/usr/bin ls victim` is `rm victim`; `./ls` in the workspace is the payload.
    if (base === dir) exe(path.join(base, 'ls'), payload);
    else fs.symlinkSync(rm, path.join(base, 'ls'));
    for (const name of ['head', 'grep', 'echo', 'git']) exe(path.join(base, name), payload);
  }
  // A hard link to rm under another name (when the temp dir shares rm's filesystem).
  try {
    fs.linkSync(rm, path.join(dir, 'hl'));
  } catch {}
  // A subdirectory that is a repository of its own, as hostile as the workspace.
  fs.mkdirSync(path.join(dir, 'sub'));
  execFileSync('git', ['init', '-q'], { cwd: path.join(dir, 'sub'), stdio: 'ignore' });
  fs.appendFileSync(path.join(dir, 'sub', '.git', 'config'), `[core]\n\tfsmonitor = ${path.join(dir, 'payload.sh')}\n`);
  // A repository an earlier command made, with a hook `git status` runs: post-index-change, when
  // the status refreshes the index (f's time differs from the index's, its content does not).
  const hooked = committedRepo(path.join(dir, 'hooked'));
  exe(path.join(hooked, '.git', 'hooks', 'post-index-change'), `#!/bin/sh\ntouch '${canary}'\nrm -f '${victim}'\n`);
  // A repository with nothing hostile in it when the line is analysed; an earlier segment of the same
  // line plants its config or a hook (round four).
  committedRepo(path.join(dir, 'clean'));
  // Files a glob turns into options.
  fs.writeFileSync(path.join(dir, '-ocanary'), '');
  fs.writeFileSync(path.join(dir, '-ew canary'), '');
  // A repository whose config runs the payload on read-only looking commands.
  const git = (...args) => execFileSync('git', args, { cwd: dir, stdio: 'ignore', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: dir } });
  git('init', '-q');
  git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'x');
  const p = path.join(dir, 'payload.sh');
  fs.appendFileSync(
    path.join(dir, '.git', 'config'),
    `[core]\n\tfsmonitor = ${p}\n\tpager = ${p}\n[diff]\n\texternal = ${p}\n[pager]\n\tlog = ${p}\n\tstatus = ${p}\n[alias]\n\tst = !${p}\n`,
  );
  fs.writeFileSync(path.join(dir, 'evil.gitconfig'), `[core]\n\tpager = ${p}\n[pager]\n\tlog = ${p}\n`);
  fs.mkdirSync(path.join(dir, 'xdg', 'git'), { recursive: true });
  fs.copyFileSync(path.join(dir, 'evil.gitconfig'), path.join(dir, 'xdg', 'git', 'config'));
  fs.writeFileSync(path.join(dir, '.gitconfig'), fs.readFileSync(path.join(dir, 'evil.gitconfig')));
  // Runners whose own options change what runs: a harmless test script and target, and a makefile
  // and a directory that are not.
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'hostile', version: '1.0.0', scripts: { test: 'node -e 0' } }));
  fs.writeFileSync(path.join(dir, 'Makefile'), 'test:\n\t@true\n');
  fs.writeFileSync(path.join(dir, 'evil.mk'), `test:\n\t@touch '${canary}'\n`);
  fs.mkdirSync(path.join(dir, 'evilmk'));
  fs.writeFileSync(path.join(dir, 'evilmk', 'Makefile'), `test:\n\t@touch '${canary}'\n`);
  return dir;
}

/** Approvals files live in a temp dir of their own, out of the attacker's workspace. */
const approvalsDir = tempDir('agent-exec-hostile-approvals-');

function approvalsFile(dir, allowlist) {
  const file = path.join(approvalsDir, `${path.basename(dir)}-approvals.json`);
  const patterns = allowlist.map((pattern) => ({ pattern }));
  fs.writeFileSync(file, JSON.stringify({ version: 1, agents: { main: { security: 'allowlist', ask: 'on-miss', allowlist: patterns } } }));
  return file;
}

/** Each policy kind of the issue, and whether its payload check includes the canary. */
function policies(dir) {
  const listed = ['ls', 'cat', 'echo', 'head', 'grep', 'test', 'printf'];
  const listFile = approvalsFile(dir, listed.flatMap((name) => [`/usr/bin/${name}`, `/bin/${name}`]));
  const emptyFile = path.join(approvalsDir, `${path.basename(dir)}-empty.json`);
  fs.writeFileSync(emptyFile, JSON.stringify({ version: 1, agents: { main: { security: 'allowlist', ask: 'on-miss', allowlist: [] } } }));
  return [
    { kind: 'allowlist', approval: { security: 'allowlist', ask: 'on-miss', approvalsFile: listFile, safeBins: [] }, canary: true },
    {
      kind: 'safe bins',
      approval: { security: 'allowlist', ask: 'on-miss', approvalsFile: emptyFile, safeBins: ['cut', 'uniq', 'head', 'tail', 'tr', 'wc', 'grep', 'sort', 'jq'] },
      canary: true,
    },
    { kind: 'read-only', approval: { rules: {}, allowReadOnly: true }, canary: true },
    {
      kind: 'prefix allow',
      approval: { rules: { allow: ['Bash(git status:*)', 'Bash(echo:*)', 'Bash(cat:*)', 'Bash(ls:*)', 'Bash(head:*)', 'Bash(test:*)', 'Bash(printf:*)'] } },
      canary: true,
    },
    { kind: 'runner prefix', approval: { rules: { allow: ['Bash(npm test:*)', 'Bash(make test:*)', 'Bash(cat:*)'] } }, canary: true },
    // Everything is allowed but rm: only the victim tells (a canary may be made legitimately).
    { kind: 'deny rules', approval: { rules: { deny: ['Bash(rm:*)', 'Bash(unlink:*)'], allow: ['Bash(*)'] } }, canary: false },
  ];
}

test('hostile corpus: nothing runs unasked that the analyzer cannot see exactly', { timeout: 600000 }, async () => {
  const only = process.env.GATE_HOSTILE_ONLY; // a substring, to rerun some commands while debugging
  const corpus = loadCorpus().filter((c) => !only || c.command.includes(only));
  if (!only) assert.ok(corpus.length >= 300, `corpus has ${corpus.length} commands`);
  const holes = [];
  const perKind = {};
  const kinds = policies(approvalsDir).map((p) => p.kind);
  for (const kind of kinds) {
    perKind[kind] = 0;
    let dir = null;
    let section = null;
    for (const entry of corpus) {
      // A fresh workspace per class, so a hole in one class cannot disarm the next one's traps.
      if (entry.section !== section) {
        section = entry.section;
        dir = hostileDir();
      }
      const { approval, canary: checkCanary } = policies(dir).find((p) => p.kind === kind);
      const canary = path.join(dir, 'canary');
      const victim = path.join(dir, 'victim');
      const { command } = entry;
      fs.writeFileSync(victim, 'v');
      fs.rmSync(canary, { force: true });
      let asked = false;
      const { result: r, spawned } = await watchSpawns(() =>
        native.exec({
          command,
          cwd: dir,
          timeoutMs: 5000,
          approval: { ...approval, timeoutMs: 5000, onApproval: async () => ((asked = true), 'deny') },
        }),
      );
      track(r.pid, spawned);
      // Under deny rules only a run of rm counts: a program deleting through its own option
      // (find -delete, git clean) is allowed by Bash(*) and not covered by Bash(rm:*).
      const ownDelete = !checkCanary && /-delete|git (clean|rm|checkout|stash)/.test(command);
      const effect = (checkCanary && fs.existsSync(canary)) || (!ownDelete && !fs.existsSync(victim));
      // Ran unasked and changed the world, or was asked, denied, and ran anyway (or spawned).
      const denied = r.approval?.allowed === false;
      if (effect || (denied && (r.pid !== 0 || spawned.length > 0))) {
        perKind[kind] += 1;
        const how = asked ? 'denied, yet it' : 'unasked, it';
        holes.push(`[${kind}] (${section.split(':')[0]}) ${how} ran: ${JSON.stringify(command)}: ${r.approval?.reason}`);
      }
    }
  }
  if (process.env.GATE_HOSTILE_REPORT) console.error(JSON.stringify({ total: corpus.length, perKind }, null, 1));
  assert.deepEqual(holes, [], `${holes.length} hostile commands ran unasked:\n${holes.join('\n')}`);
});

test('benign commands still run unasked: the false positives of issue 21 stay fixed', async () => {
  const dir = tempDir('agent-exec-benign-');
  fs.writeFileSync(path.join(dir, 'in.txt'), '1 a\n-1 b\n');
  fs.writeFileSync(path.join(dir, 'error.log'), 'first\n');
  const git = (...args) => execFileSync('git', args, { cwd: dir, stdio: 'ignore' });
  git('init', '-q');
  git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'x');
  git('remote', 'add', 'origin', 'https://example.com/x.git');
  fs.mkdirSync(path.join(dir, 'sub'));
  fs.writeFileSync(path.join(dir, 'sub', 'f.txt'), 'x\n');
  const commands = [
    'cd sub && git status --short && cat f.txt',
    "awk '$1 > 0' in.txt",
    'sed -n 1p error.log',
    "git tag -l 'v*'",
    'git remote get-url origin',
    'git branch --contains HEAD',
    'git status --short',
    'git log --oneline -1',
    'cat in.txt | head -n 1',
    'LANG=C ls',
    '! grep -q zzz in.txt',
    'cat <<EOF\nplain $HOME body\nEOF',
    // The false positives of round two.
    'which -a ls',
    'git stash list',
    'git show-ref',
    'git config --get remote.origin.url',
    'git for-each-ref --count=1',
    'git worktree list',
    'git count-objects -v',
    'echo $[1+1]',
  ];
  for (const command of commands) {
    let asked = false;
    const r = await native.exec({
      command,
      cwd: dir,
      timeoutMs: 5000,
      approval: { rules: {}, allowReadOnly: true, onApproval: async () => ((asked = true), 'deny') },
    });
    track(r.pid);
    assert.equal(asked, false, `${command} was asked: ${r.approval?.reason}`);
    assert.equal(r.approval.reason, 'read-only command', command);
    assert.equal(r.status, 'completed', command);
    assert.equal(r.exitCode, 0, `${command}: ${r.output}`);
  }
  // jq with an object constructor as a safe bin.
  const jq = await native.exec({
    command: "jq -c '{a: .}'",
    cwd: dir,
    approval: { security: 'allowlist', ask: 'on-miss', approvalsFile: path.join(approvalsDir, 'benign-jq.json'), safeBins: ['jq'], onApproval: async () => 'deny' },
  });
  assert.equal(jq.approval.decidedBy, 'policy', jq.approval.reason);
  assert.equal(jq.approval.allowed, true);
});

test('oversized commands are asked with a typed reason, never a napi-internal error', async () => {
  const api = require('../js/index.js');
  for (const [command, code] of [
    ['echo ' + 'a '.repeat(1024 * 1024), 'command-too-large'],
    ['true;'.repeat(800000), 'command-too-large'],
    ['true;'.repeat(2000), 'too-many-commands'],
  ]) {
    const a = api.analyzeCommand(command);
    assert.equal(a.ok, false);
    assert.equal(a.code, code);
    assert.ok(a.reason.length > 0);
    const requests = [];
    const r = await native.exec({ command, approval: { rules: { allow: ['Bash(true)', 'Bash(echo:*)'] }, onApproval: async (req) => (requests.push(req), 'deny') } });
    assert.equal(r.reason, 'exec denied: user denied');
    assert.equal(requests.length, 1);
    assert.equal(requests[0].analysisCode, code);
  }
});
