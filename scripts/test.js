'use strict';
// The whole test suite: Rust unit tests for the core, then the Node tests against the built addon,
// then a count of the skipped tests by reason (each reason names what the test needs: root, a writable
// cgroup, user namespaces, ...). Runs the same for root and for a normal user.

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.join(__dirname, '..');

function step(title, cmd, args) {
  process.stdout.write(`\n== ${title}: ${cmd} ${args.join(' ')}\n`);
  // A step that hangs fails after 30 minutes rather than stalling CI.
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', timeout: 30 * 60 * 1000, killSignal: 'SIGKILL' });
  if (r.status !== 0) {
    process.stdout.write(`\n== ${title} failed (exit ${r.status ?? r.signal})\n`);
    process.exit(r.status || 1);
  }
}

// Repeated in the closing summary: a step skipped at the top is easy to miss ~1,000 lines later.
let rustSummary = '';
const hasCargo = spawnSync('cargo', ['--version'], { stdio: 'ignore' }).status === 0;
const built = fs.readdirSync(root).some((f) => f.endsWith('.node'));
if (!built) {
  if (!hasCargo) {
    process.stdout.write('\n== the addon is not built and cargo is not on PATH: install Rust (https://rustup.rs), or copy a built checkout\n');
    process.exit(1);
  }
  step('build the addon', process.execPath, [path.join(root, 'node_modules/@napi-rs/cli/dist/cli.js'), 'build', '--platform', '--release']);
}
if (hasCargo) {
  // Rust tests that need what a host may lack (root, a cgroup hierarchy) record their skips in a file,
  // printed here since cargo hides a passing test's output; AGENT_EXEC_TEST_REQUIRE turns a listed
  // need's skip into a failure (core/src/test_needs.rs).
  const skipsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-exec-rust-skips-'));
  const skips = path.join(skipsDir, 'skips.txt');
  // Removed however this script ends (a failed step exits at once).
  process.on('exit', () => fs.rmSync(skipsDir, { recursive: true, force: true }));
  process.env.AGENT_EXEC_TEST_SKIPS = skips;
  step('rust unit tests', 'cargo', ['test', '--workspace', '--lib', '--', '--test-threads=2']);
  const skipped = fs.existsSync(skips) ? fs.readFileSync(skips, 'utf8').split('\n').filter(Boolean).sort() : [];
  fs.rmSync(skipsDir, { recursive: true, force: true });
  delete process.env.AGENT_EXEC_TEST_SKIPS;
  rustSummary = `rust unit tests: passed, ${skipped.length} skipped for lack of what they need`;
  process.stdout.write(`\n== rust unit tests skipped for lack of what they need: ${skipped.length}${process.env.AGENT_EXEC_TEST_REQUIRE ? ` (required here: ${process.env.AGENT_EXEC_TEST_REQUIRE})` : ''}\n`);
  for (const line of skipped) process.stdout.write(`   ${line}\n`);
} else {
  // A built checkout handed to a user without a toolchain (CI's unprivileged run): the addon's
  // behaviour is what the Node tests check; the Rust tests need cargo.
  rustSummary = 'rust unit tests: not run, cargo is not on PATH (the addon was already built)';
  process.stdout.write('\n== rust unit tests: skipped, cargo is not on PATH (the addon is already built)\n');
}

const files = fs
  .readdirSync(path.join(root, '__test__'))
  .filter((f) => f.endsWith('.test.js'))
  .sort()
  .map((f) => path.join('__test__', f));
// The usual report on stdout, and TAP in a file for the skip count.
const tapDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-exec-tap-'));
const tap = path.join(tapDir, 'report.tap');
const reporter = process.stdout.isTTY ? 'spec' : 'tap';
process.stdout.write(`\n== node tests (as ${os.userInfo().username}): node --test ${files.length} files\n`);
// Deadlines, so a hang fails instead of stalling CI: every test without its own gets 5 minutes, and
// the whole run 40.
const RUN_DEADLINE_MS = 40 * 60 * 1000;
const r = spawnSync(
  process.execPath,
  ['--test', '--test-concurrency=1', '--test-timeout=300000', `--test-reporter=${reporter}`, '--test-reporter-destination=stdout', '--test-reporter=tap', `--test-reporter-destination=${tap}`, ...files],
  { cwd: root, stdio: 'inherit', timeout: RUN_DEADLINE_MS, killSignal: 'SIGKILL' },
);
if (r.error && r.error.code === 'ETIMEDOUT') {
  process.stdout.write(`\n== the node tests did not finish within ${RUN_DEADLINE_MS / 60000} minutes: a test hangs\n`);
}
const report = fs.existsSync(tap) ? fs.readFileSync(tap, 'utf8') : '';
fs.rmSync(tapDir, { recursive: true, force: true });

// Skips by reason (the runner's own "test name does not match" skips never occur here: no filter).
const reasons = new Map();
for (const line of report.split('\n')) {
  const m = /^\s*ok \d+ - .* # SKIP ?(.*)$/.exec(line);
  if (m) reasons.set(m[1] || '(no reason given)', (reasons.get(m[1] || '(no reason given)') ?? 0) + 1);
}
const count = (key) => Number((new RegExp(`^# ${key} (\\d+)$`, 'm').exec(report) ?? [])[1] ?? NaN);
process.stdout.write(`\n== node tests as ${os.userInfo().username} (uid ${process.getuid?.() ?? '?'}): ${count('pass')} passed, ${count('fail')} failed, ${count('skipped')} skipped\n`);
for (const [reason, n] of [...reasons].sort((a, b) => b[1] - a[1])) process.stdout.write(`   ${String(n).padStart(3)} skipped: ${reason}\n`);
if (rustSummary) process.stdout.write(`== ${rustSummary}\n`);
if (r.status !== 0) {
  process.stdout.write(`\n== node tests failed (exit ${r.status ?? r.signal})\n`);
  process.exit(r.status || 1);
}
