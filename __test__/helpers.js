'use strict';
// Shared test helpers: process liveness from /proc, condition waits with deadlines, and cleanup of
// every process a test started.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

// Runs use the host's $SHELL, as OpenClaw does, and the suite's commands are written for bash: /dev/tcp,
// the exit status of a failed redirection (sh says 2, bash 1), a ^C that a non-interactive sh dies of.
// CI machines often have no $SHELL at all (then sh runs), so pin it here; the choice of shell itself is
// tested with explicit `shell` options and in the Rust unit tests of spawn::shell.
process.env.SHELL = '/bin/bash';

const native = require('../js/index.js');

/**
 * True while `pid` exists and is not a zombie. Not a pid (a pid file never written) or a `/proc` that
 * cannot be read is an error, never "not alive": a check must not pass when there is nothing to check.
 */
function alive(pid) {
  if (!Number.isInteger(pid) || pid <= 0) throw new Error(`alive(${pid}): not a pid`);
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
    return state !== 'Z' && state !== 'X';
  } catch (e) {
    if (e.code === 'ENOENT' || e.code === 'ESRCH') return false;
    throw e;
  }
}

async function waitFor(condition, { timeoutMs = 10000, intervalMs = 20, what = 'condition' } = {}) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await condition();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Pids to kill when the test file ends, whatever happened. */
const tracked = new Set();

function track(...pids) {
  for (const p of pids.flat()) if (Number.isInteger(p) && p > 0) tracked.add(p);
}

function killTracked() {
  for (const pid of tracked) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {}
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
  }
  tracked.clear();
}

/**
 * Live processes (as this process sees them) with `arg` as one of their arguments (not the program).
 * A sandboxed run has a PID namespace of its own where the host allows it, so the pids it prints (`$!`)
 * are not the host's: tests find its processes by a unique argument instead (`sleep 600.<token>`).
 */
function hostPids(arg) {
  const found = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d) || Number(d) === process.pid) continue;
    try {
      const args = fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0');
      if (args.slice(1).includes(arg) && alive(Number(d))) found.push(Number(d));
    } catch {}
  }
  return found;
}

/** The orphan watchdog (`node -e <script>` started once per host) is this process's child by design. */
function isWatchdog(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('AGENT_EXEC_SESSION=');
  } catch {
    return false;
  }
}

/**
 * Every live process below this one (children, theirs, ...), the watchdog left out. A denial is proved
 * by comparing two of these around the call: a spawn is synchronous, so a denied command that was
 * spawned anyway is either still below us or has finished, and then its effect (a canary) shows.
 */
function descendants() {
  const children = new Map();
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    let stat;
    try {
      stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
    } catch {
      continue; // ended while we looked
    }
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (!children.has(ppid)) children.set(ppid, []);
    children.get(ppid).push(Number(d));
  }
  const found = new Set();
  const walk = (pid) => {
    for (const c of children.get(pid) || []) {
      if (found.has(c) || isWatchdog(c)) continue;
      found.add(c);
      walk(c);
    }
  };
  walk(process.pid);
  return found;
}

/** Processes below this one that were not in `before` (a `descendants()` taken earlier). */
function spawnedSince(before) {
  return [...descendants()].filter((p) => !before.has(p) && alive(p));
}

/** Runs `call` and returns its result with the processes it left below this one (see `descendants`). */
async function watchSpawns(call) {
  const before = descendants();
  const result = await call();
  return { result, spawned: spawnedSince(before) };
}

/** Read pids a command wrote, one per line, into a file. */
function readPids(file) {
  try {
    return fs
      .readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

/** Temp dirs of this test file, removed when its process exits (after every test and kill). */
const tempDirs = [];
process.on('exit', () => {
  for (const d of tempDirs) fs.rmSync(d, { recursive: true, force: true });
});

function tempDir(prefix = 'agent-exec-test-') {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

/**
 * The package's entry (`js/index.js`) in a copy every user can read, for tests that load the addon as
 * another user (`nobody`): the checkout itself may sit in a private home (mode 700) that user cannot
 * enter. Copies the loader, the built `.node` and `js/`; made once per test process.
 */
let readableEntry = null;
function worldReadableEntry() {
  if (readableEntry) return readableEntry;
  const root = path.join(__dirname, '..');
  const dir = tempDir('agent-exec-package-');
  fs.chmodSync(dir, 0o755);
  for (const f of fs.readdirSync(root)) {
    if (f === 'index.js' || f === 'package.json' || f.endsWith('.node')) fs.copyFileSync(path.join(root, f), path.join(dir, f));
  }
  fs.cpSync(path.join(root, 'js'), path.join(dir, 'js'), { recursive: true });
  const open = (p) => {
    fs.chmodSync(p, fs.statSync(p).isDirectory() ? 0o755 : 0o644);
    if (fs.statSync(p).isDirectory()) for (const e of fs.readdirSync(p)) open(path.join(p, e));
  };
  open(dir);
  readableEntry = path.join(dir, 'js', 'index.js');
  return readableEntry;
}

/** exec that tracks the run's process group for cleanup. */
async function run(options) {
  const outcome = await native.exec(options);
  track(outcome.pid, outcome.leftRunning, outcome.survivors);
  return outcome;
}

/** Poll a process tool's session until it reports its exit: the last result and every poll's text. */
async function pollToExit(proc, sessionId) {
  let all = '';
  for (;;) {
    const r = await proc.execute('p', { action: 'poll', sessionId, timeout: 2000 });
    all += r.content[0].text;
    if (/Process exited with/.test(r.content[0].text)) return { last: r, all };
  }
}

/** The exec tool's texts for a non-zero exit, no output and a missing command (OpenClaw's), wherever
 *  the tool runs its commands. */
async function assertExitTexts(exec) {
  const assert = require('node:assert/strict');
  const text = (r) => r.content[0].text;
  const nonzero = await exec.execute('2', { command: 'echo oops; exit 3' });
  assert.equal(text(nonzero), 'oops\n\n(Command exited with code 3)');
  assert.equal(nonzero.details.status, 'completed');
  assert.equal(nonzero.details.exitCode, 3);
  assert.equal(text(await exec.execute('3', { command: 'true' })), '(no output)');
  const missing = await exec.execute('4', { command: 'no-such-cmd-xyz' });
  assert.equal(missing.details.status, 'failed');
  assert.equal(missing.details.exitCode, 127);
  assert.match(text(missing), /not found\n\nCommand not found$/);
}

module.exports = {
  native,
  pollToExit,
  assertExitTexts,
  alive,
  waitFor,
  track,
  killTracked,
  readPids,
  tempDir,
  run,
  hostPids,
  worldReadableEntry,
  descendants,
  spawnedSince,
  watchSpawns,
};
