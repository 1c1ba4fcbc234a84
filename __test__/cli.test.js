'use strict';
// The agent-exec command: run, check and demo, through the real bin script.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const { tempDir } = require('./helpers.js');

const cli = path.join(__dirname, '..', 'js', 'cli.js');

function run(args, opts = {}) {
  return spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', timeout: 60000, ...opts });
}

test('run streams output, prints the outcome and exits with the command\'s code', () => {
  const r = run(['run', '--', 'echo hi; exit 3']);
  assert.equal(r.status, 3);
  assert.match(r.stdout, /^hi\n\[completed\] exit code 3 in \d+ ms \(session [a-z-]+\d*, pid \d+\)\n$/);
  const t = run(['run', '--timeout', '0.3', '--grace', '100', '--json', '--', 'sleep 30']);
  assert.equal(t.status, 124);
  const outcome = JSON.parse(t.stdout);
  assert.equal(outcome.timedOut, true);
  assert.equal(outcome.reason, 'Command timed out after 0.3 seconds');
});

test('usage errors exit 2 with a message', () => {
  const r = run(['run', '--timeout', 'soon', 'ls']);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--timeout needs a number/);
  assert.equal(run(['nope']).status, 2);
  const bad = run(['run', '--cwd', '/nonexistent-dir-xyz', '--', 'ls']);
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /\[ERR_INVALID_CWD\] The cwd \/nonexistent-dir-xyz does not exist/);
});

test('run --stdin-pipe forwards this process\'s stdin and closes it at the end; --version; --help', () => {
  const r = run(['run', '--stdin-pipe', '--', 'wc -l; cat'], { input: 'one\ntwo\n' });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^2\n\[completed\] exit code 0 in \d+ ms/);
  const piped = run(['run', '--stdin-pipe', '--', 'tr a-z A-Z'], { input: 'shout\n' });
  assert.match(piped.stdout, /^SHOUT\n/);
  const v = run(['--version']);
  assert.equal(v.status, 0);
  assert.equal(v.stdout, `agent-exec ${require('../package.json').version}\n`);
  for (const args of [['run', '--help'], ['check', '-h'], ['help']]) {
    const h = run(args);
    assert.equal(h.status, 0, args.join(' '));
    assert.match(h.stdout, /^Usage:\n/);
  }
  const unknown = run(['run', '--bogus', '--', 'ls']);
  assert.equal(unknown.status, 2);
  assert.match(unknown.stderr, /^agent-exec: unknown option --bogus\n/);
});

test('check prints the analysis, the matching rule and the decision', () => {
  const dir = tempDir();
  const file = path.join(dir, 'approvals.json');
  const ls = spawnSync('sh', ['-c', 'command -v ls'], { encoding: 'utf8' }).stdout.trim();
  fs.writeFileSync(file, JSON.stringify({ version: 1, agents: { main: { allowlist: [{ pattern: ls }] } } }));
  const ok = run(['check', '--security', 'allowlist', '--approvals-file', file, '--', 'ls -la | head -n 2']);
  assert.equal(ok.status, 0, ok.stderr);
  assert.match(ok.stdout, /analysis: ok/);
  assert.match(ok.stdout, new RegExp(`\\[1\\] \\["ls","-la"\\] -> ${ls}; allowed by allowlist ${ls}`));
  assert.match(ok.stdout, /\[2\] \["head","-n","2"\] -> \S+head; allowed by safe-bin/);
  assert.match(ok.stdout, /decision: allow \(allowlisted\)/);
  assert.match(ok.stdout, /classification: list, read; read-only, search\/read \(ls is list; head is read\)/);
  const miss = run(['check', '--security', 'allowlist', '--ask', 'on-miss', '--approvals-file', file, '--', 'ls && rm -rf /tmp/x']);
  assert.equal(miss.status, 3);
  assert.match(miss.stdout, /not allowed: \S+rm is not allowlisted/);
  assert.match(miss.stdout, /decision: ask \(allowlist miss\)/);
  const bad = run(['check', '--approvals-file', file, '--json', '--', 'echo $(id)']);
  assert.equal(JSON.parse(bad.stdout).analysis.reason, 'unsupported shell token: $()');
});

test('demo runs', () => {
  const r = run(['demo']);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /Command timed out after 0\.5 seconds/);
  // The big output is cut as the tools cut it: at line boundaries, around the marker.
  assert.match(r.stdout, /\n36\n\[\.\.\. \d+ chars omitted; full output: \S+\.log \.\.\.\]\n99985\n/);
  assert.match(r.stdout, /cat saw EOF/);
});

const canSandbox = require('../js/index.js').sandboxCapabilities().enforceable;

test('run --sandbox names what was refused; sandbox prints the capabilities', { skip: !canSandbox && 'this host cannot sandbox' }, () => {
  const dir = tempDir();
  const r = run(['run', '--sandbox', '--memory', '64', '--cwd', dir, '--', 'echo in > in.txt; echo out > /etc/agent-exec-cli-probe; echo done']);
  assert.equal(r.status, 0, r.stderr);
  assert.ok(fs.existsSync(path.join(dir, 'in.txt')));
  assert.equal(fs.existsSync('/etc/agent-exec-cli-probe'), false);
  assert.match(r.stdout, /\nsandbox: writable [^;]+; network off; landlock \(ABI \d\)/);
  assert.match(r.stdout, /\n {2}refused: write \/etc\/agent-exec-cli-probe: outside the writable roots \(openat\(O_WRONLY\|O_CREAT\|O_TRUNC\), pid \d+\)\n/);
  const sockets = tempDir();
  const json = run(['run', '--unix-socket', sockets, '--cwd', dir, '--json', '--', 'true']);
  assert.equal(json.status, 0, json.stderr);
  assert.deepEqual(JSON.parse(json.stdout).sandbox.unixSockets, [fs.realpathSync(sockets)]);
  const caps = run(['sandbox', '--json']);
  assert.equal(caps.status, 0);
  assert.deepEqual(JSON.parse(caps.stdout), require('../js/index.js').sandboxCapabilities());
  const text = run(['sandbox']);
  assert.match(text.stdout, /^platform: linux\nenforceable: yes\nlandlock ABI: \d+\n/);
  const capsNow = require('../js/index.js').sandboxCapabilities();
  assert.match(text.stdout, new RegExp(`\\nuser namespaces: ${capsNow.userNamespaces ? 'yes' : 'no'}; read-only binds: ${capsNow.readOnlyBinds ? 'yes' : 'no'}; read-only mounts outside the roots: ${capsNow.readOnlyMounts ? 'yes' : 'no'}\\n`));
  const bad = run(['run', '--processes', 'many', '--', 'true']);
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /--processes needs a number/);
});

test('run --allow-domain: the network by domain, refusals named', { skip: (!canSandbox && 'this host cannot sandbox') || (spawnSync('curl', ['--version']).status !== 0 && 'curl is not installed') }, () => {
  const r = run(['run', '--allow-domain', 'allowed.localhost', '--cwd', tempDir(), '--', 'curl -s --max-time 5 http://other.localhost:9/']);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /agent-exec sandbox: other\.localhost:9: not in the allowed domains/);
  // The refusal names the process that asked: curl, which the shell exec'd, so the run's own pid.
  const refused = /\n {2}refused: network other\.localhost:9: not in the allowed domains \(GET, pid (\d+)\)\n/.exec(r.stdout);
  assert.ok(refused, r.stdout);
  assert.equal(refused[1], /\(session [\w-]+, pid (\d+)\)/.exec(r.stdout)[1], r.stdout);
  assert.match(r.stdout, /network by domain;/);
  const both = run(['run', '--allow-domain', 'a.localhost', '--network', '--', 'true']);
  assert.equal(both.status, 2);
  assert.match(both.stderr, /--network opens every host; --allow-domain opens only the names given/);
});
