'use strict';
// Exec approvals through the native API: analysis, evaluation, the JS callback, the approvals file.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');

const { native, track, killTracked, tempDir, waitFor, watchSpawns } = require('./helpers.js');
const api = require('../js/index.js');
const { spawnSync } = require('node:child_process');

test.after(killTracked);

function approvalsFile(dir, content) {
  const file = path.join(dir, 'exec-approvals.json');
  if (content !== undefined) fs.writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

/** exec for a call that must be refused: nothing spawned (no pid, no process left below this one). */
async function execDenied(options) {
  const { result, spawned } = await watchSpawns(() => native.exec(options));
  assert.equal(result.approval?.allowed, false, `${options.command} was allowed: ${result.approval?.reason}`);
  assert.equal(result.pid, 0, `${options.command} was denied but has a pid`);
  assert.deepEqual(spawned, [], `${options.command} was denied but left processes`);
  return result;
}

function policy(dir, extra = {}) {
  return { security: 'allowlist', ask: 'on-miss', approvalsFile: approvalsFile(dir), ...extra };
}

test('analyzeCommand splits chains and pipelines and resolves executables', () => {
  const a = api.analyzeCommand('ls -la && git status | head -n 1', { cwd: '/' });
  assert.equal(a.ok, true);
  assert.deepEqual(a.operators, ['&&']);
  assert.deepEqual(a.chains[0][0].argv, ['ls', '-la']);
  assert.match(a.chains[0][0].resolvedPath, /\/ls$/);
  assert.deepEqual(a.chains[1][1].argv, ['head', '-n', '1']);
  const bad = api.analyzeCommand('echo $(id)');
  assert.equal(bad.ok, false);
  assert.equal(bad.reason, 'unsupported shell token: $()');
  assert.throws(() => api.analyzeCommand(5), { code: 'ERR_INVALID_COMMAND' });
});

test('classifyCommand: kinds, read-only verdicts and reasons', () => {
  const ok = api.classifyCommand('git status && rg -n TODO src | head -n 5');
  assert.equal(ok.parsed, true);
  assert.deepEqual(ok.segments.map((s) => s.kind), ['list', 'search', 'read']);
  assert.equal(ok.isReadOnly, true);
  assert.equal(ok.isSearchOrRead, true);
  const bad = api.classifyCommand('find . -delete');
  assert.equal(bad.isReadOnly, false);
  assert.deepEqual(bad.reasons, ['find: -delete deletes files']);
  const pipeToShell = api.classifyCommand('cat package.json | sh');
  assert.equal(pipeToShell.isReadOnly, false);
  assert.equal(pipeToShell.segments[1].kind, 'other');
  const unparsed = api.classifyCommand('cat $(ls)');
  assert.equal(unparsed.parsed, false);
  assert.equal(unparsed.isReadOnly, false);
  assert.throws(() => api.classifyCommand(null), { code: 'ERR_INVALID_COMMAND' });
});

test('checkPermissionRules: deny, ask, allow over every segment; broad rules refused; suggestions', () => {
  const rules = { deny: ['Bash(rm:*)'], ask: ['Bash(git push:*)'], allow: ['Bash(ls:*)', 'Bash(npm run test:*)'] };
  assert.equal(api.checkPermissionRules('ls -la', rules).verdict, 'allow');
  assert.equal(api.checkPermissionRules('ls && git push', rules).verdict, 'ask');
  const denied = api.checkPermissionRules('ls && rm -rf build', rules);
  assert.equal(denied.verdict, 'deny');
  assert.deepEqual(denied.rules, ['Bash(rm:*)']);
  const miss = api.checkPermissionRules('npm run build', rules);
  assert.equal(miss.verdict, 'no-match');
  assert.deepEqual(miss.suggestions, ['Bash(npm run build:*)']);
  assert.throws(() => api.checkPermissionRules('ls', { allow: ['Bash(sh:*)'] }), {
    code: 'ERR_INVALID_RULE',
    message: /would allow any command through sh/,
  });
  assert.throws(() => api.checkPermissionRules('ls', { deny: ['Edit(x)'] }), { code: 'ERR_INVALID_RULE' });
  // The gate's own answer, text checks included: a covered name where the rules cannot see it run,
  // shell text given to a program without a model, an option that runs a command.
  const guarded = { deny: ['Bash(touch:*)'], allow: ['Bash(*)'] };
  for (const command of ["npx -c 'touch C'", 'ssh-agent touch C', "ssh-agent sh -c 'x=ouch; t$x C'", "git grep -O'touch C' hi"]) {
    assert.notEqual(api.checkPermissionRules(command, guarded).verdict, 'allow', command);
  }
  assert.equal(api.checkPermissionRules("git commit -m 'use bash'", guarded).verdict, 'allow');
});

test('exec with permission rules: allow runs, deny refuses, unmatched asks, read-only opt-in', async () => {
  const dir = tempDir();
  let asked = 0;
  const approval = (extra = {}) => ({
    rules: { deny: ['Bash(rm:*)'], allow: ['Bash(echo:*)'] },
    onApproval: async () => (asked++, 'deny'),
    ...extra,
  });
  const ok = await native.exec({ command: 'echo ruled', approval: approval() });
  track(ok.pid);
  assert.equal(ok.output, 'ruled\n');
  assert.equal(ok.approval.reason, 'every segment matches an allow rule');
  assert.equal(asked, 0);
  fs.mkdirSync(path.join(dir, 'x'));
  fs.writeFileSync(path.join(dir, 'x', 'victim'), 'kept');
  const denied = await execDenied({ command: 'echo a && rm -rf x', cwd: dir, approval: approval() });
  assert.equal(denied.reason, 'exec denied: `rm -rf x` matches Bash(rm:*)');
  assert.equal(denied.pid, 0, 'a denied command spawns nothing');
  assert.equal(fs.readFileSync(path.join(dir, 'x', 'victim'), 'utf8'), 'kept', 'the deny rule let rm run');
  assert.equal(asked, 0, 'a deny rule needs nobody');
  const unmatched = await execDenied({ command: 'touch made', cwd: dir, approval: approval() });
  assert.equal(unmatched.reason, 'exec denied: user denied');
  assert.equal(unmatched.pid, 0);
  assert.equal(asked, 1);
  assert.deepEqual(unmatched.approval.suggestions, ['Bash(touch:*)']);
  assert.equal(fs.existsSync(path.join(dir, 'made')), false);
  const ro = await native.exec({ command: 'ls / | head -n 1', approval: approval({ allowReadOnly: true }) });
  track(ro.pid);
  assert.equal(ro.status, 'completed');
  assert.equal(ro.approval.reason, 'read-only command');
  assert.equal(asked, 1);
  await assert.rejects(native.exec({ command: 'true', approval: { rules: { allow: ['Bash(bash:*)'] } } }), { code: 'ERR_INVALID_RULE' });
});

test('classifyCommand: every spelling of a writing option, output operands and state changes', () => {
  for (const command of [
    'uniq in.txt out.txt',
    'sort -oout.txt in.txt',
    'sort -uo out.txt in.txt',
    'sort --out=out.txt in.txt',
    'xxd in.bin out.txt',
    'date -s 2020-01-01',
    'date --set=2020-01-01',
    'date 0101000020',
    'hostname newname',
    "sed -n '1w out.txt' in.txt",
    "awk '{ print > \"out.txt\" }' in.txt",
    "printf -v 'a[$(id)]' x",
    'xargs grep x',
  ]) {
    const c = api.classifyCommand(command);
    assert.equal(c.isReadOnly, false, command);
    assert.ok(c.reasons.length > 0, command);
  }
  assert.deepEqual(api.classifyCommand('date 0101000020').reasons, ['date: the operand 0101000020 sets the system clock']);
  assert.deepEqual(api.classifyCommand('sort -uoout.txt in.txt').reasons, ['sort: -o (-uoout.txt) writes its output to a file']);
  for (const command of ["awk '$1 > 0' in.txt", 'sed -n 1p error.log', "git tag -l 'v*'", 'git remote get-url origin', 'git branch --contains HEAD', 'sort in.txt', 'date +%s']) {
    assert.equal(api.classifyCommand(command).isReadOnly, true, command);
  }
});

test('allowReadOnly: writing forms of read-only tools are asked, and a denial leaves no file', async () => {
  const dir = tempDir();
  fs.writeFileSync(path.join(dir, 'in.txt'), 'b\na\na\n');
  const asked = [];
  const approval = {
    rules: { deny: ['Bash(rm:*)'] },
    allowReadOnly: true,
    onApproval: async (req) => (asked.push(req.command), 'deny'),
  };
  const writers = ['uniq in.txt out.txt', 'sort -oout.txt in.txt', 'sort -uo out.txt in.txt', 'sort --out=out.txt in.txt'];
  for (const command of writers) {
    const r = await execDenied({ command, cwd: dir, approval });
    assert.equal(r.reason, 'exec denied: user denied', command);
    assert.equal(fs.existsSync(path.join(dir, 'out.txt')), false, `${command} wrote out.txt`);
  }
  assert.deepEqual(asked, writers);
  const sorted = await native.exec({ command: 'sort in.txt', cwd: dir, approval });
  track(sorted.pid);
  assert.equal(sorted.status, 'completed');
  assert.equal(sorted.output, 'a\na\nb\n');
  assert.equal(sorted.approval.reason, 'read-only command');
  assert.equal(asked.length, writers.length, 'sort in.txt ran without asking');
});

test('prefix rules: options that make an allowed program write any file or load code are asked (outside round six)', async () => {
  const dir = tempDir();
  fs.writeFileSync(path.join(dir, 'data.txt'), 'import os\n');
  const target = path.join(dir, 'planted.pth');
  const asked = [];
  const approval = {
    rules: { allow: ['Bash(curl:*)', 'Bash(pip3 show:*)', 'Bash(openssl req:*)', 'Bash(git cherry-pick:*)'] },
    onApproval: async (req) => (asked.push(req.command), 'deny'),
  };
  const writers = [
    `curl -sS -T data.txt file://${target}`,
    `curl -sST data.txt file://${target}`,
    `curl -sS --upl data.txt file://${target}`,
    `pip3 show --log ${target} zz`,
    `openssl req -config evil.cnf -new -x509 -nodes -subj /CN=x -keyout /dev/null`,
    'git cherry-pick --strategy=pwn side',
  ];
  for (const command of writers) {
    const r = await execDenied({ command, cwd: dir, approval });
    assert.equal(r.reason, 'exec denied: user denied', command);
    assert.equal(fs.existsSync(target), false, `${command} wrote ${target}`);
  }
  assert.deepEqual(asked, writers);
  // The same rule still lets the program's ordinary use through.
  const e = api.evaluateCommand(`curl -sS file://${path.join(dir, 'data.txt')}`, { rules: approval.rules });
  assert.equal(e.decision, 'allow', JSON.stringify(e));
});

test('prefix rules: a rule on a reader covers its reading uses, not the forms that write, delete or run (outside round seven)', async () => {
  const dir = tempDir();
  fs.writeFileSync(path.join(dir, 'package.json'), '{"name":"x"}');
  fs.writeFileSync(path.join(dir, 'in.txt'), 'a\na\n');
  fs.writeFileSync(path.join(dir, 'victim'), 'v');
  fs.writeFileSync(path.join(dir, 'args'), '--plugin ./p.so\n');
  const asked = [];
  const approval = {
    rules: { allow: ['Bash(xxd:*)', 'Bash(uniq:*)', 'Bash(find:*)', 'Bash(nm:*)', 'Bash(awk:*)'], deny: ['Bash(rm:*)'] },
    onApproval: async (req) => (asked.push(req.command), 'deny'),
  };
  const payload = Buffer.from('{"scripts":{"test":"touch canary"}}').toString('hex');
  const writers = [
    `xxd -r -p - package.json <<'E'\n${payload}\nE`,
    'uniq in.txt package.json',
    'find . -name victim -delete',
    'nm @args /bin/true',
    `awk 'BEGIN{system("touch canary")}'`,
  ];
  for (const command of writers) {
    const r = await execDenied({ command, cwd: dir, approval });
    assert.equal(r.reason, 'exec denied: user denied', command);
  }
  assert.deepEqual(asked, writers);
  assert.equal(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'), '{"name":"x"}');
  assert.equal(fs.existsSync(path.join(dir, 'victim')), true, 'find -delete ran past the deny rule on rm');
  assert.equal(fs.existsSync(path.join(dir, 'canary')), false);
  // Their reading uses still run unasked.
  const read = await native.exec({ command: 'uniq -c in.txt && xxd -l 4 in.txt && find . -name victim', cwd: dir, approval });
  track(read.pid);
  assert.equal(read.status, 'completed', read.output);
  assert.match(read.output, /2 a/);
  assert.equal(asked.length, writers.length);
});

test('prefix rules: an option in the spelling the program also takes is the option (outside round eight)', { skip: spawnSync('gcc', ['--version']).status !== 0 && 'gcc is not installed' }, async () => {
  const dir = tempDir();
  fs.writeFileSync(path.join(dir, 'a.c'), 'int main(void) { return 0; }\n');
  fs.mkdirSync(path.join(dir, 'pfx'));
  // gcc runs the compiler proper from the prefix it is given: this one plants the canary.
  fs.writeFileSync(path.join(dir, 'pfx', 'cc1'), '#!/bin/sh\ntouch "$(dirname "$0")/../canary"\n', { mode: 0o755 });
  const asked = [];
  const approval = {
    rules: { allow: ['Bash(gcc:*)', 'Bash(openssl x509:*)', 'Bash(keytool -list:*)'] },
    onApproval: async (req) => (asked.push(req.command), 'deny'),
  };
  const loaders = [
    'gcc --prefix=./pfx/ -c a.c -o /dev/null',
    'gcc --pre ./pfx/ -c a.c -o /dev/null',
    'gcc --for-linker=-plugin=./evil.so a.c -o /dev/null',
    'openssl x509 --engine ./evil.so -noout -in /dev/null',
    'keytool -list -PROVIDERPATH p.jar -PROVIDERCLASS Evil -keystore none.p12',
  ];
  for (const command of loaders) {
    const r = await execDenied({ command, cwd: dir, approval });
    assert.equal(r.reason, 'exec denied: user denied', command);
  }
  assert.deepEqual(asked, loaders);
  assert.equal(fs.existsSync(path.join(dir, 'canary')), false, 'gcc ran the prefix\'s cc1');
  const plain = await native.exec({ command: 'gcc -fsyntax-only a.c', cwd: dir, approval });
  track(plain.pid);
  assert.equal(plain.status, 'completed', plain.output);
  assert.equal(plain.exitCode, 0, plain.output);
  assert.equal(asked.length, loaders.length);
});

test('prefix rules: node --check does not cover node loading a module first (outside round eleven)', async () => {
  const dir = tempDir();
  fs.writeFileSync(path.join(dir, 'a.js'), 'module.exports = 1;\n');
  fs.writeFileSync(path.join(dir, 'pre.js'), `require('fs').writeFileSync(${JSON.stringify(path.join(dir, 'canary'))}, 'x');\n`);
  const asked = [];
  const approval = {
    rules: { allow: ['Bash(node --check:*)'] },
    onApproval: async (req) => (asked.push(req.command), 'deny'),
  };
  const loaders = ['node --check --require ./pre.js a.js', 'node --check -r ./pre.js a.js', 'node --check --import ./pre.js a.js'];
  for (const command of loaders) {
    const r = await execDenied({ command, cwd: dir, approval });
    assert.equal(r.reason, 'exec denied: user denied', command);
  }
  assert.deepEqual(asked, loaders);
  assert.equal(fs.existsSync(path.join(dir, 'canary')), false);
  const checked = await native.exec({ command: 'node --check a.js', cwd: dir, approval });
  track(checked.pid);
  assert.equal(checked.exitCode, 0, checked.output);
  assert.equal(asked.length, loaders.length);
});

test('evaluateCommand: wrapper options are walked as getopt walks them (env -vu tr rm is rm, not a safe tr)', () => {
  const dir = tempDir();
  const opts = policy(dir);
  assert.equal(api.evaluateCommand('tr a b', opts).decision, 'allow');
  for (const command of ['env -vu tr rm victim', 'env --un tr rm victim']) {
    const e = api.evaluateCommand(command, opts);
    assert.equal(e.decision, 'ask', command);
    assert.match(e.segments[0].miss, /\/rm is not allowlisted/, command);
  }
  assert.equal(api.analyzeCommand('env -vu tr rm victim').chains[0][0].resolvedPath.endsWith('/rm'), true);
});

test('evaluateCommand: ls && rm does not pass on an ls allowlist', () => {
  const dir = tempDir();
  const lsPath = api.analyzeCommand('ls').chains[0][0].resolvedPath;
  approvalsFile(dir, { version: 1, agents: { main: { allowlist: [{ pattern: lsPath }] } } });
  const opts = policy(dir);
  assert.equal(api.evaluateCommand('ls -la', opts).decision, 'allow');
  const chained = api.evaluateCommand('ls && rm -rf ~', opts);
  assert.equal(chained.allowlistSatisfied, false);
  assert.equal(chained.decision, 'ask');
  assert.equal(chained.segments[0].satisfiedBy, 'allowlist');
  assert.equal(chained.segments[1].satisfiedBy, undefined);
  assert.equal(api.evaluateCommand('ls | head -n 2', opts).segments[1].satisfiedBy, 'safe-bin');
  assert.equal(api.evaluateCommand('rm x', { ...opts, ask: 'off' }).decision, 'deny');
  approvalsFile(dir, { version: 1, agents: { main: { security: 'allowlist', allowlist: [{ pattern: lsPath }] } } });
  const loosened = api.evaluateCommand('rm x', { approvalsFile: approvalsFile(dir), security: 'full', ask: 'off' });
  assert.equal(loosened.security, 'allowlist', 'per-call values cannot loosen the file');
  assert.equal(loosened.decision, 'deny');
});

test('allow-once runs the command without persisting anything', async () => {
  const dir = tempDir();
  const requests = [];
  const r = await native.exec({
    command: 'echo approved-once',
    approval: { ...policy(dir), onApproval: async (req) => (requests.push(req), 'allow-once') },
  });
  track(r.pid);
  assert.equal(r.status, 'completed');
  assert.equal(r.output, 'approved-once\n');
  assert.equal(requests.length, 1);
  const req = requests[0];
  assert.equal(req.command, 'echo approved-once');
  assert.equal(req.reason, 'allowlist miss');
  assert.match(req.id, /^[0-9a-f-]{36}$/);
  assert.deepEqual(req.segments[0].argv, ['echo', 'approved-once']);
  assert.ok(req.expiresAtMs > Date.now());
  assert.deepEqual(req.allowedDecisions, ['allow-once', 'allow-always', 'deny']);
  assert.equal(r.approval.answer, 'allow-once');
  assert.equal(fs.existsSync(approvalsFile(dir)), false);
});

test('allow-always persists the resolved executables; the next run does not ask', async () => {
  const dir = tempDir();
  let asked = 0;
  const opts = { ...policy(dir), onApproval: () => (asked++, Promise.resolve('allow-always')) };
  const first = await native.exec({ command: 'echo one | tr a-z A-Z', approval: opts });
  track(first.pid);
  assert.equal(first.output, 'ONE\n');
  assert.equal(asked, 1);
  const file = JSON.parse(fs.readFileSync(approvalsFile(dir), 'utf8'));
  const patterns = file.agents.main.allowlist.map((e) => e.pattern);
  assert.ok(patterns.some((p) => p.endsWith('/echo')), JSON.stringify(patterns));
  assert.ok(patterns.some((p) => p.endsWith('/tr')));
  assert.equal(fs.statSync(approvalsFile(dir)).mode & 0o777, 0o600);
  assert.deepEqual(first.approval.persisted.sort(), patterns.slice().sort());
  const second = await native.exec({ command: 'echo two', approval: opts });
  track(second.pid);
  assert.equal(second.output, 'two\n');
  assert.equal(asked, 1, 'not asked again');
  assert.equal(second.approval.decidedBy, 'policy');
});

test('allowlisted runs record their use in the approvals file, in one rewrite for a burst, and exit flushes the rest', async () => {
  const dir = tempDir();
  const tr = require('node:child_process').execFileSync('sh', ['-c', 'command -v tr'], { encoding: 'utf8' }).trim();
  approvalsFile(dir, { version: 1, agents: { main: { allowlist: [{ id: 'tr', pattern: tr }] } } });
  const inode = () => fs.statSync(approvalsFile(dir)).ino;
  const before = inode();
  // A burst of allowlisted runs: every one is allowed by the allowlist, none asks.
  const runs = await Promise.all(Array.from({ length: 20 }, (_, i) => native.exec({ command: `tr a${i} b`, approval: policy(dir) })));
  for (const r of runs) {
    track(r.pid);
    assert.equal(r.approval.decidedBy, 'policy');
    assert.equal(r.exitCode, 0, r.output);
  }
  // The use is recorded shortly after, off the runs' path.
  const entry = await waitFor(() => {
    const e = JSON.parse(fs.readFileSync(approvalsFile(dir), 'utf8')).agents.main.allowlist[0];
    return e.lastUsedAt ? e : null;
  }, { what: 'lastUsedAt to be recorded' });
  assert.match(entry.lastUsedCommand, /^tr a\d+ b$/);
  assert.equal(entry.id, 'tr');
  assert.notEqual(inode(), before);

  // A host that exits right after an allowlisted run (its event loop empty) still records it: flushed at exit.
  const script = `
    const ae = require(${JSON.stringify(path.join(__dirname, '..', 'js', 'index.js'))});
    ae.exec({ command: 'tr x at-exit', approval: ${JSON.stringify(policy(dir))} }).then((r) => console.log(r.approval.decidedBy));
  `;
  const out = require('node:child_process').spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 30000 });
  assert.equal(out.stdout.trim(), 'policy', out.stderr);
  const last = JSON.parse(fs.readFileSync(approvalsFile(dir), 'utf8')).agents.main.allowlist[0];
  assert.equal(last.lastUsedCommand, 'tr x at-exit');
});

test('deny, a throwing handler, a rejecting one and a wrong answer are all denials, as results', async () => {
  const dir = tempDir();
  const cases = [
    [() => 'deny', 'exec denied: user denied'],
    [() => { throw new Error('boom'); }, /exec denied: approval handler failed \(the handler threw/],
    [() => Promise.reject(new Error('nope')), /exec denied: approval handler failed \(the handler rejected/],
    [() => 'yes please', /exec denied: approval handler failed \(the handler returned "yes please"/],
    [() => 42, /exec denied: approval handler failed/],
  ];
  for (const [onApproval, reason] of cases) {
    const r = await execDenied({ command: 'touch should-not-exist', cwd: dir, approval: { ...policy(dir), onApproval } });
    assert.equal(r.status, 'failed');
    assert.match(r.reason, reason instanceof RegExp ? reason : new RegExp(reason.replace(/[()]/g, '\\$&')));
    assert.equal(r.pid, 0);
    assert.equal(r.approval.allowed, false);
    assert.equal(fs.existsSync(path.join(dir, 'should-not-exist')), false);
  }
});

test('a handler that never answers times out and askFallback decides (default deny)', async () => {
  const dir = tempDir();
  const never = () => new Promise(() => {});
  const made = (name) => fs.existsSync(path.join(dir, name));
  const denied = await execDenied({ command: 'touch timed-out', cwd: dir, approval: { ...policy(dir), timeoutMs: 200, onApproval: never } });
  assert.equal(denied.status, 'failed');
  assert.equal(denied.reason, 'exec denied: approval-timeout');
  assert.equal(denied.approval.decidedBy, 'fallback');
  assert.equal(denied.pid, 0);
  assert.equal(made('timed-out'), false, 'a timed-out approval ran the command');
  // A caller may only tighten askFallback; the file may set it looser.
  const loose = await execDenied({
    command: 'touch loosened',
    cwd: dir,
    approval: { ...policy(dir), timeoutMs: 200, onApproval: never, askFallback: 'full' },
  });
  assert.equal(loose.reason, 'exec denied: approval-timeout');
  assert.equal(loose.pid, 0);
  assert.equal(made('loosened'), false, 'a caller loosened askFallback and the command ran');
  approvalsFile(dir, { version: 1, defaults: { askFallback: 'full' } });
  const allowed = await native.exec({
    command: 'echo via-fallback',
    approval: { approvalsFile: approvalsFile(dir), security: 'full', ask: 'always', timeoutMs: 200, onApproval: never },
  });
  track(allowed.pid);
  assert.equal(allowed.output, 'via-fallback\n');
  assert.equal(allowed.approval.decidedBy, 'fallback');
});

test('security deny refuses everything; a malformed approvals file is a typed error and stays untouched', async () => {
  const dir = tempDir();
  let asked = 0;
  const r = await execDenied({
    command: 'touch refused',
    cwd: dir,
    approval: { security: 'deny', approvalsFile: approvalsFile(dir), onApproval: async () => (asked++, 'allow-once') },
  });
  assert.equal(r.reason, 'exec denied: security=deny');
  assert.equal(r.pid, 0);
  assert.equal(asked, 0, 'security=deny asks nobody');
  assert.equal(fs.existsSync(path.join(dir, 'refused')), false, 'security=deny ran the command');
  const bad = approvalsFile(dir, '{"version": 1, "agents": [');
  const before = fs.readFileSync(bad);
  await assert.rejects(native.exec({ command: 'echo no', approval: { approvalsFile: bad } }), (e) => {
    assert.equal(e.code, 'ERR_INVALID_APPROVALS_FILE');
    assert.ok(e.message.includes(bad), e.message);
    return true;
  });
  assert.ok(fs.readFileSync(bad).equals(before));
  await assert.rejects(native.exec({ command: 'true', approval: { security: 'sometimes' } }), { code: 'ERR_INVALID_OPTION' });
  await assert.rejects(native.exec({ command: 'true', approval: 'yes' }), { code: 'ERR_INVALID_OPTION' });
});

test('8 processes adding entries at once lose none', async () => {
  const dir = tempDir();
  const file = approvalsFile(dir);
  const script = `
    const api = require(${JSON.stringify(path.join(__dirname, '..', 'js', 'index.js'))});
    const dir = process.argv[1], idx = process.argv[2], file = process.argv[3];
    (async () => {
      for (let i = 0; i < 10; i++) {
        const cmd = dir + '/bin-' + idx + '-' + i;
        await api.exec({ command: cmd, approval: { security: 'allowlist', ask: 'on-miss', approvalsFile: file, onApproval: async () => 'allow-always' } });
      }
    })();`;
  for (let p = 0; p < 8; p++) {
    for (let i = 0; i < 10; i++) {
      const f = path.join(dir, `bin-${p}-${i}`);
      fs.writeFileSync(f, '#!/bin/sh\ntrue\n', { mode: 0o755 });
    }
  }
  const children = Array.from({ length: 8 }, (_, p) => spawn(process.execPath, ['-e', script, dir, String(p), file], { stdio: 'inherit' }));
  children.forEach((c) => track(c.pid));
  await Promise.all(children.map((c) => new Promise((res) => c.on('exit', res))));
  const entries = JSON.parse(fs.readFileSync(file, 'utf8')).agents.main.allowlist.map((e) => e.pattern);
  assert.equal(new Set(entries).size, 80);
  assert.equal(entries.length, 80);
});

test('allowReadOnly in a PTY: git, which would open a pager there, is asked unless --no-pager', async () => {
  const dir = tempDir();
  const git = (args) => require('node:child_process').execFileSync('git', args, { cwd: dir, stdio: 'ignore', env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_SYSTEM: '/dev/null' } });
  git(['init', '-q']);
  git(['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'first']);
  const asked = [];
  const approval = { rules: { deny: ['Bash(rm:*)'] }, allowReadOnly: true, onApproval: async (req) => (asked.push(req.command), 'deny') };
  const env = { GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_SYSTEM: '/dev/null' };
  const paged = await execDenied({ command: 'git log --oneline', cwd: dir, pty: true, env, approval });
  assert.deepEqual(asked, ['git log --oneline']);
  assert.equal(paged.approval.allowed, false);
  assert.equal(paged.pid, 0);
  const plain = await native.exec({ command: 'git --no-pager log --oneline', cwd: dir, pty: true, env, approval });
  track(plain.pid);
  assert.equal(plain.approval.allowed, true);
  assert.match(plain.output, /first/);
  const piped = await native.exec({ command: 'git log --oneline', cwd: dir, env, approval });
  track(piped.pid);
  assert.equal(piped.approval.allowed, true, 'no terminal, no pager: read-only as before');
  assert.equal(asked.length, 1);
});

test('B\'s analyzer texts: a line break is named by the character itself; a not-yet-existing allowlisted absolute path is allowed', () => {
  assert.equal(native.analyzeCommand('ls\nrm -rf x').reason, 'unsupported shell token: \n');
  assert.equal(native.analyzeCommand('echo a\rb').reason, 'unsupported shell token: \r');
  assert.equal(native.analyzeCommand('echo "a\\\nb"').reason, 'unsupported shell token: newline');
  // B's CRLF cases: a line break inside double quotes is "newline", escaped or not.
  assert.equal(native.analyzeCommand('echo "ok $\\\r\n(id -u)"').reason, 'unsupported shell token: newline');
  assert.equal(native.analyzeCommand('echo "a\r\nb"').reason, 'unsupported shell token: newline');
  const dir = tempDir();
  const approvalsFile = path.join(dir, 'approvals.json');
  const tool = path.join(dir, 'build', 'bin', 'tool');
  fs.writeFileSync(approvalsFile, JSON.stringify({ version: 1, agents: { '*': { allowlist: [{ pattern: tool }] } } }));
  const ev = native.evaluateCommand(`${tool} --all`, { security: 'allowlist', ask: 'on-miss', approvalsFile, cwd: dir });
  assert.equal(ev.decision, 'allow', JSON.stringify(ev));
  const climb = native.evaluateCommand(`${path.join(dir, 'build', '..', '..', 'tool')}`, { security: 'allowlist', ask: 'on-miss', approvalsFile, cwd: dir });
  assert.notEqual(climb.decision, 'allow');
});

test('allow-always says what it keeps and where, and never keeps a shell, interpreter or runner', async () => {
  const dir = tempDir();
  const file = approvalsFile(dir);
  const requests = [];
  const answer = (decision) => async (req) => (requests.push(req), decision);
  const stored = () => (fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')).agents?.main?.allowlist ?? [] : []).map((e) => e.pattern);
  // A plain program: the request names the executable, the file and the agent; the answer stores exactly that.
  const uname = await native.exec({ command: 'uname -s', cwd: dir, approval: { ...policy(dir), onApproval: answer('allow-always') } });
  track(uname.pid);
  const unameReq = requests.at(-1);
  assert.deepEqual(unameReq.allowAlways.entries, [fs.realpathSync(require('node:child_process').execFileSync('sh', ['-c', 'command -v uname'], { encoding: 'utf8' }).trim())]);
  assert.equal(unameReq.allowAlways.file, file);
  assert.equal(unameReq.allowAlways.agentId, 'main');
  assert.equal(unameReq.allowAlways.withheld, undefined);
  assert.deepEqual(stored(), unameReq.allowAlways.entries);
  // A runner: storing its executable would let it run anything, so allow-always is not offered, and
  // an answer of allow-always anyway stores nothing.
  fs.writeFileSync(path.join(dir, 'build.sh'), 'true\n');
  for (const command of ['python3 -c "print(1)"', 'bash build.sh', `${JSON.stringify(process.execPath)} -e 0`]) {
    const r = await native.exec({ command, cwd: dir, approval: { ...policy(dir), onApproval: answer('allow-always') } });
    track(r.pid);
    const req = requests.at(-1);
    assert.equal(req.command, command);
    assert.deepEqual(req.allowedDecisions, ['allow-once', 'deny'], command);
    assert.match(req.allowAlways.withheld, /would add \S+ to the allowlist, and \S+ would then run any script or command unasked/, command);
    assert.deepEqual(req.allowAlways.entries, [], command);
  }
  assert.deepEqual(stored(), unameReq.allowAlways.entries, 'a withheld allow-always stored something');
  // Programs that run the program in their arguments, or run shell commands, by any of their names
  // (the loader, setarch's linux64, an editor by its alternatives name, a multiplexer): the same.
  const which = (name) => require('node:child_process').spawnSync('sh', ['-c', `command -v ${name}`]).status === 0;
  const runners = ['/lib64/ld-linux-x86-64.so.2 /bin/true', 'linux64 true', 'setarch x86_64 true', 'editor --version', 'tmux -V', 'start-stop-daemon --version']
    .filter((c) => (c.startsWith('/') ? fs.existsSync(c.split(' ')[0]) : which(c.split(' ')[0])));
  for (const command of runners) {
    const r = await native.exec({ command, cwd: dir, approval: { ...policy(dir), onApproval: answer('allow-always') } });
    track(r.pid);
    assert.match(requests.at(-1).allowAlways.withheld ?? '', /would then run any script or command unasked/, command);
  }
  // A program whose path holds a glob character would be stored as a pattern matching others.
  fs.writeFileSync(path.join(dir, 'x*'), '#!/bin/sh\necho benign\n', { mode: 0o755 });
  const globbed = await native.exec({ command: '"./x*"', cwd: dir, approval: { ...policy(dir), onApproval: answer('allow-always') } });
  track(globbed.pid);
  assert.match(requests.at(-1).allowAlways.withheld ?? '', /would match other files too/);
  assert.deepEqual(stored(), unameReq.allowAlways.entries, 'a withheld allow-always stored something');
  // A shell wrapping a chain: what it runs is what is kept, not the shell.
  await native.exec({ command: 'sh -c "true; uname"', cwd: dir, approval: { ...policy(dir), onApproval: answer('deny') } });
  assert.ok(requests.at(-1).allowAlways.entries.every((e) => !/\/(sh|dash|bash)$/.test(e)), requests.at(-1).allowAlways.entries.join());
  // Rules: the rules it would add, kept by the host (no file).
  const ruled = await native.exec({ command: 'touch made', cwd: dir, approval: { rules: { allow: [] }, onApproval: answer('deny') } });
  assert.equal(ruled.pid, 0);
  assert.deepEqual(requests.at(-1).allowAlways.entries, ['Bash(touch:*)']);
  assert.equal(requests.at(-1).allowAlways.file, undefined);
});
