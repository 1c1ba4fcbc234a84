'use strict';
// The OpenClaw tools as OpenClaw ships them since about August 2026 (the default profile): checks before
// anything spawns, timeout texts and details, input-wait detection, the later poll, the action list.
// B's April texts stay under `profile: 'openclaw-2026-04'` (tools.test.js).

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const api = require('../js/index.js');
const { pollWaitMs } = require('../js/tools/process-tool.js');
const { inputWaitIdleMs } = require('../js/tools/shared.js');
const { native, waitFor, track, killTracked, tempDir, descendants, spawnedSince } = require('./helpers.js');

test.after(killTracked);

const text = (r) => r.content[0].text;
const GUIDANCE =
  'The command was terminated, but external side effects may already have completed. Verify the resulting state before retrying. Do not automatically rerun non-idempotent commands. Use a higher timeout only when the command is known to be safe to retry.';

test('an unknown host is refused before anything runs; an empty one is no host', async () => {
  const dir = fs.realpathSync(tempDir());
  const canary = path.join(dir, 'ran');
  const exec = api.createExecTool({ cwd: dir });
  const before = descendants();
  await assert.rejects(exec.execute('1', { command: `touch ${canary}`, host: 'mars' }), {
    code: 'ERR_INVALID_OPTION',
    message: 'Invalid exec host "mars". Allowed values: auto, sandbox, gateway, node.',
  });
  await assert.rejects(exec.execute('2', { command: `touch ${canary}`, host: 7 }), {
    message: 'Invalid exec host value type number. Allowed values: auto, sandbox, gateway, node.',
  });
  assert.deepEqual(spawnedSince(before), []);
  assert.equal(fs.existsSync(canary), false);
  const r = await exec.execute('3', { command: 'echo ran', host: '  ' });
  assert.equal(text(r), 'ran');
});

test('a workdir that is not a directory is a failed result, taken literally, and nothing runs', async () => {
  const dir = fs.realpathSync(tempDir());
  const canary = path.join(dir, 'ran');
  fs.writeFileSync(path.join(dir, 'a-file'), '');
  fs.mkdirSync(path.join(dir, 'sub'));
  const exec = api.createExecTool({ cwd: dir });
  for (const workdir of ['/no/such/dir', '~', '~/', 'a-file', 'missing-sub', '   ', '']) {
    const r = await exec.execute('1', { command: `touch ${canary}`, workdir });
    assert.equal(
      text(r),
      `workdir "${workdir}" is unavailable or not a directory: command was not executed. workdir is treated as a literal path; shell expansions such as "~" are not applied. Use an existing directory, omit an explicit workdir to use the default cwd, or update the configured default cwd.`,
    );
    assert.deepEqual(r.details, {
      status: 'failed',
      exitCode: null,
      exitSignal: null,
      failureKind: 'runtime-error',
      durationMs: 0,
      aggregated: '',
      timedOut: false,
      cwd: workdir,
    });
  }
  assert.equal(fs.existsSync(canary), false);
  // A relative workdir is beneath the tool's cwd.
  assert.equal(text(await exec.execute('2', { command: 'pwd', workdir: 'sub' })), path.join(dir, 'sub'));
  // The /approve guard comes first.
  await assert.rejects(exec.execute('3', { command: '/approve abc allow-once', workdir: '/no/such/dir' }), { message: /^exec cannot run \/approve commands/ });
});

test('a timeout says so, why retrying needs care, and details name the ending', async () => {
  const exec = api.createExecTool({});
  const r = await exec.execute('1', { command: 'echo partial; sleep 30', timeout: 0.3 });
  const t = text(r);
  assert.ok(t.startsWith('partial\n\nCommand timed out after 0.3 seconds.'), t);
  assert.match(t, /re-run with a higher timeout \(e\.g\., exec timeout=300\), or timeout=0 for none\./);
  assert.ok(t.includes(`\n\n${GUIDANCE}\n\n`), t);
  assert.match(t, /If it should keep running, start it with exec background=true or yieldMs/);
  assert.equal(r.details.status, 'failed');
  assert.equal(r.details.timedOut, true);
  assert.equal(r.details.exitReason, 'overall-timeout');
  assert.equal(r.details.failureKind, 'overall-timeout');
  assert.equal(r.details.noOutputTimedOut, false);
  assert.equal(r.details.exitSignal, 'SIGTERM');
  // Without background continuation, no advice to use it.
  const fg = api.createExecTool({ allowBackground: false });
  const r2 = await fg.execute('2', { command: 'sleep 30', timeout: 0.3 });
  assert.ok(text(r2).endsWith(GUIDANCE), text(r2));
});

test('every ending has its exitReason and failureKind', async () => {
  const exec = api.createExecTool({});
  const ok = await exec.execute('1', { command: 'true' });
  assert.equal(ok.details.exitReason, 'exit');
  assert.equal(ok.details.exitSignal, null);
  assert.equal(ok.details.noOutputTimedOut, false);
  assert.equal(ok.details.failureKind, undefined);
  const quiet = await exec.execute('2', { command: 'exit 3' });
  assert.equal(text(quiet), '(no output)\n\n(Command exited with code 3)');
  assert.equal(quiet.details.exitReason, 'exit');
  for (const [command, kind, reason] of [
    ['no-such-command-xyz', 'shell-command-not-found', 'exit'],
    ['/dev/null', 'shell-not-executable', 'exit'],
    ['kill -9 $$', 'signal', 'signal'],
  ]) {
    const r = await exec.execute('3', { command });
    assert.equal(r.details.status, 'failed', command);
    assert.equal(r.details.failureKind, kind, command);
    assert.equal(r.details.exitReason, reason, command);
  }
  const ac = new AbortController();
  const pending = exec.execute('4', { command: 'sleep 30', yieldMs: 20000 }, ac.signal);
  await waitFor(() => native.listSessions().some((s) => s.command === 'sleep 30' && s.status === 'running') || true);
  setTimeout(() => ac.abort(), 100);
  const aborted = await pending;
  assert.equal(aborted.details.failureKind, 'aborted');
  assert.equal(aborted.details.exitReason, 'manual-cancel');
});

test('the default timeout bounds background runs; poll, log and list name the timeout', async () => {
  const { exec, process: proc } = api.createBashTools({ timeoutSec: 0.5, scopeKey: 'later:timeout' });
  const r = await exec.execute('1', { command: 'echo begun; sleep 30', background: true });
  track(r.details.pid);
  const id = r.details.sessionId;
  await waitFor(() => native.getSession(id)?.status !== 'running', { what: 'the timeout to end the run' });
  const polled = await proc.execute('2', { action: 'poll', sessionId: id });
  assert.equal(text(polled), `begun\n\nProcess exited with signal SIGTERM.\n\n${GUIDANCE}`);
  assert.equal(polled.details.exitReason, 'overall-timeout');
  assert.equal(polled.details.timedOut, true);
  assert.equal(polled.details.exitSignal, 'SIGTERM');
  const log = await proc.execute('3', { action: 'log', sessionId: id });
  assert.ok(text(log).endsWith(GUIDANCE));
  assert.equal(log.details.exitReason, 'overall-timeout');
  const listed = await proc.execute('4', { action: 'list' });
  assert.match(text(listed), new RegExp(`^${id} failed    \\S+ \\[overall-timeout\\] :: echo begun;$`, 'm'));
  assert.equal(listed.details.sessions.find((s) => s.sessionId === id).timedOut, true);
});

test('notifyOnExit off: the running result says no wake will come and how to collect the result', async () => {
  const exec = api.createExecTool({ notifyOnExit: false, scopeKey: 'later:wake' });
  const r = await exec.execute('1', { command: 'sleep 30', background: true });
  track(r.details.pid);
  const sentence =
    'Automatic completion wake is disabled (tools.exec.notifyOnExit=false). If the task needs this result, use poll with a timeout to collect it before ending the turn, unless another continuation is already arranged.';
  assert.equal(
    text(r),
    `Command still running (session ${r.details.sessionId}, pid ${r.details.pid}). Use process (list/poll/log/write/send-keys/submit/paste/kill/clear/remove) for follow-up. ${sentence}`,
  );
  assert.ok(r.details.followUp.endsWith(sentence));
  await native.killSession(r.details.sessionId);
  const on = api.createExecTool({ scopeKey: 'later:wake' });
  const r2 = await on.execute('2', { command: 'sleep 30', background: true });
  track(r2.details.pid);
  assert.ok(!text(r2).includes('notifyOnExit'));
  await native.killSession(r2.details.sessionId);
});

test('the script preflight is skipped in the yolo mode only (gateway, security full, ask off)', async () => {
  const dir = fs.realpathSync(tempDir());
  const canary = path.join(dir, 'ran');
  fs.writeFileSync(path.join(dir, 'bad.py'), `import pathlib\npathlib.Path(${JSON.stringify(canary)}).touch()\npayload = $DM_JSON\n`);
  // The default modes are full and off: the yolo mode, where the host trusts every command. Python
  // itself refuses the file (a syntax error): it ran.
  const yolo = api.createExecTool({ cwd: dir });
  const ran = await yolo.execute('1', { command: 'python3 bad.py' });
  assert.equal(ran.details.status, 'completed');
  assert.match(text(ran), /SyntaxError/);
  // Anything stricter keeps the preflight, which refuses before anything runs.
  for (const modes of [{ security: 'allowlist', ask: 'off' }, { security: 'full', ask: 'on-miss' }]) {
    const exec = api.createExecTool({ cwd: dir, ...modes, onApproval: async () => 'allow-once' });
    await assert.rejects(exec.execute('2', { command: 'python3 bad.py' }), { code: 'ERR_PREFLIGHT_REJECTED' });
  }
  const tightened = await yolo.execute('3', { command: 'python3 bad.py', ask: 'always' }).catch((e) => e);
  assert.equal(tightened.code, 'ERR_PREFLIGHT_REJECTED');
  assert.equal(fs.existsSync(canary), false);
  // The /approve guard holds in every mode.
  await assert.rejects(yolo.execute('4', { command: `touch ${canary}; /approve abc deny` }), { message: /^exec cannot run \/approve/ });
  assert.equal(fs.existsSync(canary), false);
});

test('process: the action list is checked first, and the schema names it', async () => {
  const proc = api.createProcessTool({});
  const expected = 'Invalid process action. Expected one of: list, poll, log, write, send-keys, submit, paste, kill, clear, remove, screen';
  for (const action of ['explode', undefined, 'POLL', '']) {
    const r = await proc.execute('1', { action });
    assert.equal(text(r), expected, String(action));
    assert.equal(r.details.status, 'failed');
  }
  assert.equal(text(await proc.execute('2', { action: 'poll' })), 'sessionId is required for this action.');
  assert.deepEqual(proc.parameters.properties.action.enum.slice(0, 10), ['list', 'poll', 'log', 'write', 'send-keys', 'submit', 'paste', 'kill', 'clear', 'remove']);
});

test('process: poll waits at most 30 s, parses like OpenClaw, and returns as soon as unread output is there', async () => {
  assert.equal(pollWaitMs(100000, 30000), 30000);
  assert.equal(pollWaitMs(2500.9, 30000), 2500);
  assert.equal(pollWaitMs('1500', 30000), 1500);
  assert.equal(pollWaitMs(-4, 30000), 0);
  for (const junk of ['1.5s', 'soon', null, undefined, NaN, {}]) assert.equal(pollWaitMs(junk, 30000), 0);
  const { exec, process: proc } = api.createBashTools({ scopeKey: 'later:poll' });
  const r = await exec.execute('1', { command: 'echo first; sleep 3; echo second; sleep 30', background: true });
  track(r.details.pid);
  const id = r.details.sessionId;
  // Waited to the end of its timeout, the poll would hold "second" too.
  const polled = await proc.execute('2', { action: 'poll', sessionId: id, timeout: 20000 });
  assert.equal(text(polled), 'first\n\nProcess still running.');
  await native.killSession(id);
});

test('process: an aborted poll throws and leaves the output for the next poll', async () => {
  const { exec, process: proc } = api.createBashTools({ scopeKey: 'later:abort' });
  const r = await exec.execute('1', { command: 'echo kept; sleep 30', background: true });
  track(r.details.pid);
  const id = r.details.sessionId;
  await waitFor(() => native.getSession(id)?.lastOutputAt !== undefined, { what: 'the output' });
  const gone = new AbortController();
  gone.abort();
  await assert.rejects(proc.execute('2', { action: 'poll', sessionId: id, timeout: 5000 }, gone.signal), {
    name: 'AbortError',
    message: 'Poll aborted before reading output.',
  });
  // Aborted while waiting (nothing new to read): the wait ends at the abort.
  const first = await proc.execute('3', { action: 'poll', sessionId: id });
  assert.equal(text(first), 'kept\n\nProcess still running.');
  const later = new AbortController();
  const waiting = proc.execute('4', { action: 'poll', sessionId: id, timeout: 20000 }, later.signal);
  later.abort();
  await assert.rejects(waiting, { name: 'AbortError' });
  await native.killSession(id);
});

test('process: input-wait detection on a quiet session with writable input', async () => {
  const { exec, process: proc } = api.createBashTools({ scopeKey: 'later:input', inputWaitIdleMs: 1000 });
  const r = await exec.execute('1', { command: 'echo "Name?"; read name; echo "hi $name"', background: true, pty: true });
  track(r.details.pid);
  const id = r.details.sessionId;
  await waitFor(() => (native.getSession(id)?.idleMs ?? 0) >= 1000 && native.getSession(id).lastOutputAt, { what: 'a second of quiet' });
  const info = native.getSession(id);
  assert.equal(info.stdinWritable, true);
  const polled = await proc.execute('2', { action: 'poll', sessionId: id });
  assert.match(
    text(polled),
    /^Name\?\n\nNo new output for \d+s; this session may be waiting for input\. Use process write, send-keys, submit, or paste to provide input\.$/,
  );
  assert.equal(polled.details.waitingForInput, true);
  assert.equal(polled.details.stdinWritable, true);
  assert.ok(polled.details.idleMs >= 1000);
  assert.equal(polled.details.lastOutputAt, info.lastOutputAt);
  const listed = await proc.execute('3', { action: 'list' });
  assert.match(text(listed), new RegExp(`^${id} running   \\S+ \\[input-wait\\] :: echo "Name\\?";$`, 'm'));
  const entry = listed.details.sessions.find((s) => s.sessionId === id);
  assert.equal(entry.waitingForInput, true);
  const log = await proc.execute('4', { action: 'log', sessionId: id });
  assert.match(text(log), /\n\nNo new output for \d+s; this session may be waiting for input\./);
  assert.equal(log.details.waitingForInput, true);
  await proc.execute('5', { action: 'write', sessionId: id, data: 'ada' });
  await proc.execute('6', { action: 'submit', sessionId: id });
  let all = '';
  for (;;) {
    const p = await proc.execute('7', { action: 'poll', sessionId: id, timeout: 5000 });
    all += text(p);
    if (p.details.status !== 'running') break;
  }
  assert.match(all, /hi ada/);
  // Input that cannot be written is never waited on, however quiet the run (B's pipes are closed).
  const closed = await exec.execute('8', { command: 'echo once; sleep 30', background: true });
  track(closed.details.pid);
  await waitFor(() => (native.getSession(closed.details.sessionId)?.idleMs ?? 0) >= 1000, { what: 'quiet' });
  const p2 = await proc.execute('9', { action: 'poll', sessionId: closed.details.sessionId });
  assert.equal(p2.details.stdinWritable, false);
  assert.equal(p2.details.waitingForInput, false);
  assert.equal(text(p2), 'once\n\nProcess still running.');
  await native.killSession(closed.details.sessionId);
});

test('process: the input-wait threshold comes from OPENCLAW_PROCESS_INPUT_WAIT_IDLE_MS, clamped', () => {
  const saved = process.env.OPENCLAW_PROCESS_INPUT_WAIT_IDLE_MS;
  try {
    delete process.env.OPENCLAW_PROCESS_INPUT_WAIT_IDLE_MS;
    assert.equal(inputWaitIdleMs(), 15000);
    for (const [raw, want] of [['2500', 2500], ['5', 1000], ['9999999', 600000], ['15s', 15000], ['', 15000]]) {
      process.env.OPENCLAW_PROCESS_INPUT_WAIT_IDLE_MS = raw;
      assert.equal(inputWaitIdleMs(), want, raw);
    }
    assert.equal(inputWaitIdleMs(4000), 4000);
  } finally {
    if (saved === undefined) delete process.env.OPENCLAW_PROCESS_INPUT_WAIT_IDLE_MS;
    else process.env.OPENCLAW_PROCESS_INPUT_WAIT_IDLE_MS = saved;
  }
});

test('process: a session whose process ended while its output drains is finalizing', async () => {
  const { exec, process: proc } = api.createBashTools({ scopeKey: 'later:final' });
  // The shell exits at once; its background child keeps the output open through the drain window.
  const r = await exec.execute('1', { command: 'sleep 1.5 & echo left', background: true });
  track(r.details.pid);
  const id = r.details.sessionId;
  await waitFor(() => native.getSession(id)?.finalizing === true, { what: 'the drain window' });
  for (const action of ['write', 'send-keys', 'submit', 'paste', 'kill']) {
    const res = await proc.execute('2', { action, sessionId: id, data: 'x', literal: 'x', text: 'x' });
    assert.equal(text(res), `Session ${id} is finalizing.`, action);
  }
  await waitFor(() => native.getSession(id)?.status !== 'running', { what: 'the end' });
});

test('process: retryInMs backs off on quiet polls and resets on output', async () => {
  const { exec, process: proc } = api.createBashTools({ scopeKey: 'later:retry' });
  const r = await exec.execute('1', { command: 'read line; echo "$line"; sleep 30', background: true, pty: true });
  track(r.details.pid);
  const id = r.details.sessionId;
  const seen = [];
  for (let i = 0; i < 5; i++) seen.push((await proc.execute('2', { action: 'poll', sessionId: id })).details.retryInMs);
  assert.deepEqual(seen, [5000, 10000, 30000, 60000, 60000]);
  await proc.execute('3', { action: 'write', sessionId: id, data: 'back\r' });
  await waitFor(async () => native.getSession(id)?.tail.includes('back'), { what: 'the echo' });
  await waitFor(() => (native.getSession(id)?.idleMs ?? 0) >= 0);
  const after = await proc.execute('4', { action: 'poll', sessionId: id });
  assert.equal(after.details.retryInMs, 5000);
  await native.killSession(id);
});

test('a completion wake comes at once, and a timed-out run\'s notice carries the guidance', async () => {
  const events = [];
  const beats = [];
  const exec = api.createExecTool({
    sessionKey: 'agent:later',
    timeoutSec: 0.5,
    onSystemEvent: (t) => events.push(t),
    requestHeartbeat: (o) => beats.push(o),
  });
  const r = await exec.execute('1', { command: 'echo working; sleep 30', background: true });
  track(r.details.pid);
  await waitFor(() => events.length === 1, { what: 'the notice' });
  assert.equal(events[0], `Exec failed (${r.details.sessionId.slice(0, 8)}, signal SIGTERM) :: working\n\n${GUIDANCE}`);
  assert.deepEqual(beats, [{ source: 'exec-event', intent: 'event', reason: 'exec-event', coalesceMs: 0, sessionKey: 'agent:later' }]);
});

test('an interactive channel login is refused through exec, on every host, and nothing runs', async () => {
  const dir = fs.realpathSync(tempDir());
  const bin = path.join(dir, 'bin');
  const canary = path.join(dir, 'ran');
  fs.mkdirSync(bin);
  fs.writeFileSync(path.join(bin, 'openclaw'), `#!/bin/sh\ntouch ${canary}\n`, { mode: 0o755 });
  let nodeRuns = 0;
  const exec = api.createExecTool({ cwd: dir, pathPrepend: [bin], runOnNode: () => nodeRuns++ });
  const refusal =
    'exec cannot run interactive OpenClaw channel login commands. Run `openclaw channels login` in a terminal on the gateway host, or use the channel-specific login agent tool when available (for WhatsApp: `whatsapp_login`).';
  for (const command of ['openclaw channels login', 'npx openclaw channels login', "bash -lc 'pnpm exec openclaw channel login --channel whatsapp'"]) {
    await assert.rejects(exec.execute('1', { command }), { code: 'ERR_PREFLIGHT_REJECTED', message: refusal });
    await assert.rejects(exec.execute('2', { command, host: 'node' }), { message: refusal });
  }
  assert.equal(fs.existsSync(canary), false);
  assert.equal(nodeRuns, 0);
  // Other subcommands run.
  await exec.execute('3', { command: 'openclaw channels status' });
  assert.equal(fs.existsSync(canary), true);
});

test('strictInlineEval: an allowlisted interpreter\'s inline program is asked, without allow-always', async () => {
  const dir = fs.realpathSync(tempDir());
  const canary = path.join(dir, 'ran');
  const approvalsFile = path.join(dir, 'approvals.json');
  const python = fs.realpathSync('/usr/bin/python3');
  fs.writeFileSync(approvalsFile, JSON.stringify({ version: 1, agents: { '*': { allowlist: [{ pattern: python }] } } }));
  const asked = [];
  const tool = (strictInlineEval, answer) =>
    api.createExecTool({
      cwd: dir,
      security: 'allowlist',
      ask: 'on-miss',
      approvalsFile,
      strictInlineEval,
      onApproval: async (request) => {
        asked.push(request);
        return answer;
      },
    });
  const inline = `/usr/bin/python3 -c "open('${canary}', 'w')"`;
  // Off (the default): the allowlist covers the interpreter, whatever program it is given.
  await tool(false, 'deny').execute('1', { command: inline });
  assert.equal(asked.length, 0);
  assert.equal(fs.existsSync(canary), true);
  fs.rmSync(canary);
  // On: asked, allow-always not offered; a denial runs nothing.
  const denied = await tool(true, 'deny').execute('2', { command: inline });
  assert.equal(asked.length, 1);
  assert.deepEqual(asked[0].allowedDecisions, ['allow-once', 'deny']);
  assert.match(asked[0].reason, /strict inline-eval mode requires explicit approval for python3 -c/);
  assert.equal(denied.details.status, 'failed');
  assert.equal(fs.existsSync(canary), false);
  // An option's value before the program is no script: still inline, still asked.
  for (const [i, command] of [`/usr/bin/python3 -X dev -c "open('${canary}', 'w')"`, `/usr/bin/python3 -W ignore -c "open('${canary}', 'w')"`].entries()) {
    await tool(true, 'deny').execute(`2-${i}`, { command });
    assert.equal(asked.length, 2 + i, command);
    assert.equal(fs.existsSync(canary), false, command);
  }
  asked.splice(1);
  // A script run by the same interpreter is not inline: unasked.
  fs.writeFileSync(path.join(dir, 'ok.py'), 'print("script")\n');
  const script = await tool(true, 'deny').execute('3', { command: '/usr/bin/python3 ok.py' });
  assert.equal(text(script), 'script');
  assert.equal(asked.length, 1);
});

test('an approval nobody can give: approval-unavailable, and nothing runs', async () => {
  const dir = fs.realpathSync(tempDir());
  const canary = path.join(dir, 'ran');
  const exec = api.createExecTool({ cwd: dir, security: 'allowlist', ask: 'on-miss', approvalsFile: path.join(dir, 'a.json') });
  const before = descendants();
  const r = await exec.execute('1', { command: `touch ${canary}` });
  assert.deepEqual(spawnedSince(before), []);
  assert.equal(fs.existsSync(canary), false);
  assert.ok(text(r).startsWith('Exec approval is required, but no interactive approval client is currently available.\n\nApprove it from the Web UI or terminal UI.'), text(r));
  assert.deepEqual(r.details, {
    status: 'approval-unavailable',
    reason: 'no-approval-route',
    sentApproverDms: false,
    host: 'gateway',
    command: `touch ${canary}`,
    cwd: dir,
  });
  // What the policy allows still runs without anyone to ask.
  const ok = await exec.execute('2', { command: 'head -n 1' });
  assert.equal(ok.details.status, 'completed');
  // B's profile: askFallback decides (deny by default), as a failed result.
  const april = api.createExecTool({ cwd: dir, security: 'allowlist', ask: 'on-miss', approvalsFile: path.join(dir, 'a.json'), profile: 'openclaw-2026-04' });
  const denied = await april.execute('3', { command: `touch ${canary}` });
  assert.equal(denied.details.status, 'failed');
  assert.equal(fs.existsSync(canary), false);
});

test('a cron run cannot wait for an approval: askFallback decides, and a refusal throws', async () => {
  const dir = fs.realpathSync(tempDir());
  const canary = path.join(dir, 'ran');
  const approvalsFile = path.join(dir, 'a.json');
  const cron = (askFallback, ask = 'on-miss') => {
    fs.writeFileSync(approvalsFile, JSON.stringify({ version: 1, defaults: askFallback ? { askFallback } : {}, agents: {} }));
    return api.createExecTool({ cwd: dir, security: 'allowlist', ask, approvalsFile, trigger: 'cron' });
  };
  const before = descendants();
  await assert.rejects(cron().execute('1', { command: `touch ${canary}` }), (e) => {
    assert.equal(e.code, 'ERR_APPROVAL_UNAVAILABLE');
    const lines = e.message.split('\n');
    assert.equal(lines[0], 'exec denied: Automation runs cannot wait for interactive exec approval.');
    assert.equal(lines[1], 'Effective host exec policy: security=allowlist ask=on-miss askFallback=deny');
    assert.equal(lines[2], `Stricter values from tools.exec and ${approvalsFile} both apply.`);
    assert.equal(lines[3], 'Fix one of these:');
    assert.match(lines.at(-1), /^Tip: run "openclaw doctor"/);
    return true;
  });
  assert.deepEqual(spawnedSince(before), []);
  assert.equal(fs.existsSync(canary), false);
  // ask=always asks even for what the allowlist satisfies; askFallback=allowlist then lets it run.
  const r = await cron('allowlist', 'always').execute('2', { command: 'head -n 1' });
  assert.equal(r.details.status, 'completed');
  await assert.rejects(cron('allowlist', 'always').execute('3', { command: `touch ${canary}` }), { code: 'ERR_APPROVAL_UNAVAILABLE' });
  assert.equal(fs.existsSync(canary), false);
});

test('a script rewritten while its approval was pending does not run', async () => {
  const dir = fs.realpathSync(tempDir());
  const canary = path.join(dir, 'ran');
  const script = path.join(dir, 'tool.sh');
  fs.writeFileSync(script, 'echo approved code\n');
  const exec = api.createExecTool({
    cwd: dir,
    security: 'allowlist',
    ask: 'on-miss',
    approvalsFile: path.join(dir, 'a.json'),
    onApproval: async () => {
      // While the user reads the request, the script becomes other code.
      fs.writeFileSync(script, `touch ${canary}\n`);
      return 'allow-once';
    },
  });
  const before = descendants();
  const r = await exec.execute('1', { command: 'bash tool.sh' });
  assert.deepEqual(spawnedSince(before), []);
  assert.equal(r.details.status, 'failed');
  assert.equal(text(r), 'exec denied: SYSTEM_RUN_DENIED: approval script operand changed before execution');
  assert.equal(fs.existsSync(canary), false);
  // Approved as it is, it runs.
  fs.writeFileSync(script, 'echo approved code\n');
  const same = api.createExecTool({ cwd: dir, security: 'allowlist', ask: 'on-miss', approvalsFile: path.join(dir, 'a.json'), onApproval: async () => 'allow-once' });
  assert.equal(text(await same.execute('2', { command: 'bash tool.sh' })), 'approved code');
});

test('kill and remove of a running session say termination was requested (the tree is gone all the same)', async () => {
  const { exec, process: proc } = api.createBashTools({ scopeKey: 'later:kill' });
  const a = await exec.execute('1', { command: 'sleep 300', background: true });
  track(a.details.pid);
  const k = await proc.execute('2', { action: 'kill', sessionId: a.details.sessionId });
  assert.equal(text(k), `Termination requested for session ${a.details.sessionId}.`);
  assert.equal(k.details.status, 'completed');
  assert.equal(native.getSession(a.details.sessionId).status, 'failed');
  const b = await exec.execute('3', { command: 'sleep 300', background: true });
  track(b.details.pid);
  const r = await proc.execute('4', { action: 'remove', sessionId: b.details.sessionId });
  assert.equal(text(r), `Removed session ${b.details.sessionId} (termination requested).`);
  assert.equal(r.details.status, 'completed');
  assert.equal(native.getSession(b.details.sessionId), null);
  for (const pid of [a.details.pid, b.details.pid]) assert.equal(require('./helpers.js').alive(pid), false, `${pid} outlived the kill`);
});
