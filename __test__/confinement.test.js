'use strict';
// Every "yes" the approval gate gives on analysis alone runs confined (issue 30): the read-only class
// under permission rules, the Claude Code tool's read-only auto-allow and safe bins under an
// allowlist run in a read-only sandbox; what the user trusted by name (allowlist entries, allow
// rules, the handler's answers) runs as configured. Each test checks the world: a canary file.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const api = require('../js/index.js');
const { native, killTracked, tempDir, run, waitFor } = require('./helpers.js');

test.after(killTracked);

const caps = native.sandboxCapabilities();
const noRules = { allow: [], deny: [], ask: [] };
const deny = async () => 'deny';
const gitEnv = { GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@e', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@e', HOME: '/nonexistent' };

/**
 * A repository with a change, and a program the analysis does not see run: the host's environment
 * names an external diff program (`GIT_EXTERNAL_DIFF`) that writes a canary. `git diff` is read-only
 * to the analyzer; what it runs is not.
 */
function misjudgedGitDiff() {
  const dir = tempDir('agent-exec-confine-');
  execFileSync('git', ['init', '-q'], { cwd: dir, env: { ...process.env, ...gitEnv } });
  fs.writeFileSync(path.join(dir, 'f'), 'a\n');
  execFileSync('git', ['add', 'f'], { cwd: dir, env: { ...process.env, ...gitEnv } });
  execFileSync('git', ['commit', '-qm', 'one'], { cwd: dir, env: { ...process.env, ...gitEnv } });
  fs.writeFileSync(path.join(dir, 'f'), 'b\n');
  const tool = path.join(tempDir('agent-exec-confine-bin-'), 'xdiff');
  const canary = path.join(dir, 'canary');
  fs.writeFileSync(tool, `#!/bin/sh\necho written > ${canary}\n`, { mode: 0o755 });
  return { dir, canary, env: { GIT_EXTERNAL_DIFF: tool } };
}

test('a misjudged "read-only" command that writes is stopped by the confinement, and the refusal is reported', { skip: !caps.enforceable && 'this host cannot sandbox: the next test covers it' }, async () => {
  const { dir, canary, env } = misjudgedGitDiff();
  const r = await run({ command: 'git diff', cwd: dir, env, approval: { rules: noRules, allowReadOnly: true, onApproval: deny } });
  assert.equal(r.approval.allowed, true);
  assert.equal(r.approval.decidedBy, 'policy');
  assert.equal(r.approval.analysisOnly, true);
  assert.equal(r.approval.confinement, 'read-only-sandbox');
  assert.equal(fs.existsSync(canary), false, 'the confined command wrote its canary');
  const refused = r.sandbox.denials.find((d) => d.operation === 'write' && d.path === canary);
  assert.ok(refused, JSON.stringify(r.sandbox.denials));
  // Nothing writable but its private temp dir, and no network.
  assert.deepEqual(r.sandbox.writableRoots, [r.sandbox.tmpDir]);
  assert.equal(r.sandbox.network, false);

  // The same command trusted by name (an allow rule) runs as configured: the canary is written.
  const trusted = await run({ command: 'git diff', cwd: dir, env, approval: { rules: { ...noRules, allow: ['Bash(git diff:*)'] }, allowReadOnly: true, onApproval: deny } });
  assert.equal(trusted.approval.analysisOnly, false);
  assert.equal(trusted.approval.confinement, undefined);
  assert.equal(trusted.sandbox, undefined);
  assert.equal(fs.existsSync(canary), true, 'a run trusted by name is not confined');
});

test('where no sandbox can be made, the result says only the analysis held', { skip: caps.enforceable && 'this host can sandbox (the test above covers it)' }, async () => {
  const dir = tempDir('agent-exec-confine-');
  const r = await run({ command: 'ls', cwd: dir, approval: { rules: noRules, allowReadOnly: true, onApproval: deny } });
  assert.equal(r.approval.confinement, 'analysis-only');
  assert.match(r.approval.confinementNote, /cannot make a sandbox/);
});

test('a safe bin under an allowlist runs confined; an allowlist entry runs as configured', { skip: !caps.enforceable && 'this host cannot sandbox' }, async () => {
  const dir = tempDir('agent-exec-confine-');
  const approvalsFile = path.join(dir, 'approvals.json');
  const safe = await run({ command: 'head -n 1', cwd: dir, approval: { security: 'allowlist', ask: 'off', approvalsFile } });
  assert.equal(safe.approval.allowed, true);
  assert.equal(safe.approval.analysisOnly, true);
  assert.equal(safe.approval.confinement, 'read-only-sandbox');
  assert.ok(safe.sandbox, 'the safe bin ran in a sandbox');

  const touch = execFileSync('sh', ['-c', 'command -v touch'], { encoding: 'utf8' }).trim();
  fs.writeFileSync(approvalsFile, JSON.stringify({ version: 1, agents: { main: { security: 'allowlist', ask: 'off', allowlist: [{ pattern: fs.realpathSync(touch) }] } } }));
  const canary = path.join(dir, 'made');
  const named = await run({ command: `touch ${canary}`, cwd: dir, approval: { security: 'allowlist', ask: 'off', approvalsFile } });
  assert.equal(named.approval.allowed, true, named.approval.reason);
  assert.equal(named.approval.analysisOnly, false);
  assert.equal(named.sandbox, undefined);
  assert.equal(fs.existsSync(canary), true);
});

test('an answer of the handler runs as configured, not confined', async () => {
  const dir = tempDir('agent-exec-confine-');
  const canary = path.join(dir, 'canary');
  const r = await run({ command: `touch ${canary}`, cwd: dir, approval: { rules: noRules, allowReadOnly: true, onApproval: async () => 'allow-once' } });
  assert.equal(r.approval.decidedBy, 'user');
  assert.equal(r.approval.analysisOnly, false);
  assert.equal(r.approval.confinement, undefined);
  assert.equal(fs.existsSync(canary), true);
});

test('the Claude Code Bash tool names the confinement of a read-only command it ran without asking', { skip: !caps.enforceable && 'this host cannot sandbox' }, async () => {
  const { dir, canary, env } = misjudgedGitDiff();
  const t = api.createClaudeCodeTools({ cwd: dir, env, onPermissionRequest: deny });
  try {
    const ls = await t.bash.execute('1', { command: 'ls' });
    assert.equal(ls.details.confinement, 'read-only-sandbox');
    assert.equal(ls.details.sandboxed, true);
    const diff = await t.bash.execute('2', { command: 'git diff' });
    assert.equal(diff.details.confinement, 'read-only-sandbox');
    assert.equal(fs.existsSync(canary), false, 'the misjudged command wrote through the tool');
    assert.match(diff.content[0].text, /canary/);
  } finally {
    await t.dispose();
  }
});

test('nothing of a confined run outlives it: a process it leaves behind ends with it', { skip: (!caps.enforceable || !caps.processNamespaces) && 'needs a sandbox with PID namespaces' }, async () => {
  const { dir, env } = misjudgedGitDiff();
  const marker = `agent-exec-confined-leftover-${process.pid}-${Date.now()}`;
  // The external diff program leaves a process behind and returns at once.
  const tool = path.join(tempDir('agent-exec-confine-bin-'), 'xdiff-bg');
  fs.writeFileSync(tool, `#!/bin/sh\npython3 -c 'import time; time.sleep(60)' ${marker} </dev/null >/dev/null 2>&1 &\nexit 0\n`, { mode: 0o755 });
  const withMarker = () =>
    fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p)).filter((p) => {
      try {
        return fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(marker);
      } catch {
        return false;
      }
    });
  const r = await run({ command: 'git diff', cwd: dir, env: { ...env, GIT_EXTERNAL_DIFF: tool }, approval: { rules: noRules, allowReadOnly: true, onApproval: deny } });
  assert.equal(r.approval.confinement, 'read-only-sandbox');
  assert.ok(r.sandbox.mechanisms.some((m) => m.startsWith('nothing outlives the command')), r.sandbox.mechanisms.join());
  await waitFor(() => withMarker().length === 0, { what: 'the confined run\'s leftover process to end', timeoutMs: 10000 });
  // A sandbox the host asked for keeps its background jobs until they end, as unsandboxed runs do.
  const kept = await run({ command: 'git diff', cwd: dir, env: { ...env, GIT_EXTERNAL_DIFF: tool }, sandbox: { writableRoots: [dir] } });
  assert.ok(!kept.sandbox.mechanisms.some((m) => m.startsWith('nothing outlives the command')));
  await waitFor(() => withMarker().length > 0, { what: 'the leftover of an ordinary sandboxed run' });
  for (const p of withMarker()) {
    try {
      process.kill(Number(p), 'SIGKILL');
    } catch {}
  }
});
