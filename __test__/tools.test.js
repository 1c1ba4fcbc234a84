'use strict';
// The OpenClaw-compatible tools, exercised only through execute(), as an agent calls them.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const api = require('../js/index.js');
const { alive, waitFor, track, killTracked, tempDir, readPids, watchSpawns, pollToExit, assertExitTexts } = require('./helpers.js');

test.after(killTracked);

const text = (r) => r.content[0].text;


test('tool metadata and schemas', () => {
  const { exec, process: proc } = api.createBashTools({ hasCronTool: true });
  assert.equal(exec.name, 'exec');
  assert.equal(exec.label, 'exec');
  assert.match(exec.description, /^Execute shell commands with background continuation/);
  assert.match(exec.description, /use cron instead\. Use pty=true/);
  // The process tool's description is B's, with the cron sentence only when the host has a cron tool.
  const b = 'Manage running exec sessions for commands already started: list, poll, log, write, send-keys, submit, paste, kill. Use poll/log when you need status, logs, quiet-success confirmation, or completion confirmation when automatic completion wake is unavailable. Use write/send-keys/submit/paste/kill for input or intervention.';
  assert.equal(api.createProcessTool({}).description, b);
  assert.equal(api.createProcessTool({ hasCronTool: true }).description, `${b} Do not use process polling to emulate timers or reminders; use cron for scheduled follow-ups.`);
  assert.equal(proc.description, api.createProcessTool({ hasCronTool: true }).description);
  assert.deepEqual(exec.parameters.required, ['command']);
  assert.equal(exec.parameters.properties.yieldMs.description, 'Milliseconds to wait before backgrounding (default 10000)');
  for (const k of ['command', 'workdir', 'env', 'yieldMs', 'background', 'timeout', 'pty', 'elevated', 'host', 'security', 'ask', 'node']) {
    assert.ok(exec.parameters.properties[k], k);
  }
  assert.equal(proc.name, 'process');
  for (const k of ['action', 'sessionId', 'data', 'keys', 'hex', 'literal', 'text', 'bracketed', 'eof', 'offset', 'limit', 'timeout']) {
    assert.ok(proc.parameters.properties[k], k);
  }
});

test('exec: completed, non-zero exit note, no output, failures as results', async () => {
  const exec = api.createExecTool({});
  const ok = await exec.execute('1', { command: 'echo hello' });
  assert.equal(text(ok), 'hello');
  assert.equal(ok.details.status, 'completed');
  assert.equal(ok.details.exitCode, 0);
  assert.equal(ok.details.aggregated, 'hello');
  assert.equal(typeof ok.details.durationMs, 'number');
  await assertExitTexts(exec);
  // B's text (April 2026); the default profile's later text is in openclaw-later.test.js.
  const april = api.createExecTool({ profile: 'openclaw-2026-04' });
  const timeout = await april.execute('5', { command: 'sleep 30', timeout: 0.3 });
  assert.equal(timeout.details.status, 'failed');
  assert.equal(timeout.details.timedOut, true);
  assert.equal(
    text(timeout),
    'Command timed out after 0.3 seconds. If this command is expected to take longer, re-run with a higher timeout (e.g., exec timeout=300). If it should keep running, start it with exec background=true or yieldMs so OpenClaw can register a pollable process session. Do not rely on shell backgrounding with a trailing &.',
  );
  await assert.rejects(exec.execute('6', { command: '' }), { message: 'Provide a command to start.' });
});

test('the Clawdis profile: a tool named bash, A\'s description, a 20 s default yield and A\'s pending cap', async () => {
  const bash = api.createExecTool({ profile: 'clawdis' });
  assert.equal(bash.name, 'bash');
  assert.equal(bash.label, 'bash');
  assert.equal(
    bash.description,
    'Execute shell commands with background continuation. Use yieldMs/background to continue later via process tool. Use pty=true for TTY-required commands (terminal UIs, coding agents).',
  );
  assert.equal(bash.parameters.properties.yieldMs.description, 'Milliseconds to wait before backgrounding (default 20000)');
  assert.throws(() => api.createExecTool({ profile: 'clawdbot-2' }), /Unknown exec tool profile "clawdbot-2"/);
  // 50000 chars pending: B's cap (30000) would cut it, A's (200000) keeps it whole.
  const proc = api.createProcessTool({});
  const r = await bash.execute('1', { command: "head -c 50000 /dev/zero | tr '\\0' x; echo", background: true });
  let polled = '';
  await waitFor(async () => {
    const p = await proc.execute('p', { action: 'poll', sessionId: r.details.sessionId, timeout: 2000 });
    polled += text(p).replace(/\n\nProcess (exited with .*|still running\.)$/, '');
    return /Process exited/.test(text(p));
  }, { what: 'the run to end' });
  assert.equal(polled.replace(/[^x]/g, '').length, 50000);
});

test('exec: B\'s script preflight refuses shell variables in python/node code, and nothing runs', async () => {
  const dir = fs.realpathSync(tempDir());
  const canary = path.join(dir, 'ran');
  fs.writeFileSync(path.join(dir, 'bad.py'), `import pathlib\npathlib.Path(${JSON.stringify(canary)}).touch()\npayload = $DM_JSON\n`);
  fs.writeFileSync(path.join(dir, 'bad.js'), `require('fs').writeFileSync(${JSON.stringify(canary)}, '');\nconst x = $DM_JSON;\n`);
  fs.writeFileSync(path.join(dir, 'ok.js'), 'console.log("echo $HOME")\n');
  // B's profile: the preflight runs in every mode (later OpenClaw skips it in the "yolo" mode, the
  // default; openclaw-later.test.js).
  const exec = api.createExecTool({ cwd: dir, profile: 'openclaw-2026-04' });
  await assert.rejects(exec.execute('1', { command: 'python3 bad.py' }), (e) => {
    assert.equal(e.code, 'ERR_PREFLIGHT_REJECTED');
    assert.match(e.message, /^exec preflight: detected likely shell variable injection \(\$DM_JSON\) in python script: bad\.py:3\.\nIn Python, use os\.environ\.get\("DM_JSON"\)/);
    return true;
  });
  await assert.rejects(exec.execute('2', { command: 'node bad.js' }), /In Node\.js, use process\.env\["DM_JSON"\] instead of raw \$DM_JSON/);
  await assert.rejects(exec.execute('3', { command: 'cat bad.py | python3 && echo ok' }), /exec preflight: complex interpreter invocation detected/);
  assert.equal(fs.existsSync(canary), false);
  const ok = await exec.execute('4', { command: 'node ok.js' });
  assert.equal(text(ok), 'echo $HOME');
});

test('exec: a model cannot run /approve through the shell, in any position or wrapper, on any host', async () => {
  const dir = fs.realpathSync(tempDir());
  const canary = path.join(dir, 'ran');
  const text = 'exec cannot run /approve commands. Show the /approve command to the user as chat text, or route it through the approval command handler instead of shell execution.';
  let nodeRuns = 0;
  const exec = api.createExecTool({ cwd: dir, runOnNode: () => nodeRuns++ });
  for (const command of [
    `touch ${canary} && /approve abc123 allow-once`,
    `touch ${canary}; env -S '/approve abc123 allow-always'`,
    `sh -c 'touch ${canary}; command /approve abc123 deny'`,
    `touch ${canary} | sudo /approve abc123 always`,
    `touch ${canary}; FOO=1 /approve abc123 allow-once`,
  ]) {
    await assert.rejects(exec.execute('1', { command }), { message: text });
    await assert.rejects(exec.execute('2', { command, host: 'node' }), { message: text });
  }
  assert.equal(fs.existsSync(canary), false);
  assert.equal(nodeRuns, 0);
  const said = await exec.execute('3', { command: "echo 'type /approve abc123 allow-once in chat'" });
  assert.equal(said.content[0].text, 'type /approve abc123 allow-once in chat');
});

test('exec: bad parameters get a typed error before anything runs; values B ignores get a warning line', async () => {
  const dir = fs.realpathSync(tempDir());
  const canary = path.join(dir, 'ran');
  // B's profile ignores an unknown host with a warning; later OpenClaw throws (openclaw-later.test.js).
  const exec = api.createExecTool({ cwd: dir, profile: 'openclaw-2026-04' });
  for (const [params, code, message] of [
    [{ command: 42 }, 'ERR_INVALID_COMMAND', 'The command must be a string of shell code such as "ls -la", but it is a number.'],
    [{ command: { a: 1 } }, 'ERR_INVALID_COMMAND', /but it is an object\.$/],
    [{ command: ['touch', canary] }, 'ERR_INVALID_COMMAND', /but it is an array\.$/],
    [{ command: true }, 'ERR_INVALID_COMMAND', /but it is a boolean\.$/],
    [{ command: '' }, 'ERR_INVALID_COMMAND', 'Provide a command to start.'],
    [{}, 'ERR_INVALID_COMMAND', 'Provide a command to start.'],
    [{ command: `touch ${canary}`, env: ['FOO=1'] }, 'ERR_INVALID_ENV', 'env must be an object of string values such as {"FOO": "1"}, but it is an array.'],
    [{ command: `touch ${canary}`, env: { A: 1 } }, 'ERR_INVALID_ENV', 'env.A must be a string, but it is a number.'],
  ]) {
    await assert.rejects(exec.execute('1', params), (e) => {
      assert.equal(e.code, code, JSON.stringify(params));
      if (typeof message === 'string') assert.equal(e.message, message);
      else assert.match(e.message, message);
      return true;
    });
  }
  assert.equal(fs.existsSync(canary), false);
  const warned = async (params, warning, output) => {
    const r = await exec.execute('2', params);
    assert.equal(text(r), `${warning}\n\n${output}`, JSON.stringify(params));
  };
  await warned({ command: 'echo hi', timeout: -5 }, 'Warning: timeout -5 is below 0; the command runs without a timeout, as with timeout 0.', 'hi');
  await warned({ command: 'tty || true', pty: 'yes' }, 'Warning: pty "yes" is not true or false (no PTY); it was ignored.', 'not a tty');
  await warned({ command: 'echo hi', host: 'mars' }, 'Warning: host "mars" is not one of auto, sandbox, gateway, node (the configured host runs it); it was ignored.', 'hi');
  await warned({ command: 'pwd', workdir: 5 }, 'Warning: workdir 5 is not a directory path; it was ignored.', dir);
});

test('exec: workdir fallback warning, env policy, OPENCLAW_SHELL, pathPrepend', async () => {
  const dir = fs.realpathSync(tempDir());
  // B's fallback to the cwd; later OpenClaw fails the call instead (openclaw-later.test.js).
  const exec = api.createExecTool({ cwd: dir, pathPrepend: ['/opt/agent-bin'], profile: 'openclaw-2026-04' });
  const r = await exec.execute('1', { command: 'pwd; echo "$OPENCLAW_SHELL"; echo "$PATH" | cut -d: -f1', workdir: '/no/such/dir' });
  assert.equal(text(r), `Warning: workdir "/no/such/dir" is unavailable; using "${dir}".\n\n${dir}\nexec\n/opt/agent-bin`);
  await assert.rejects(exec.execute('2', { command: 'true', env: { PATH: '/x' } }), {
    message: "Security Violation: Custom 'PATH' variable is forbidden during host execution.",
  });
  await assert.rejects(exec.execute('3', { command: 'true', env: { LD_PRELOAD: '/x.so' } }), {
    message: "Security Violation: Environment variable 'LD_PRELOAD' is forbidden during host execution.",
  });
  await assert.rejects(exec.execute('4', { command: 'true', env: { NODE_OPTIONS: '-r x', BASH_ENV: '/x' } }), {
    message: 'Security Violation: blocked override keys: BASH_ENV, NODE_OPTIONS.',
  });
  await assert.rejects(exec.execute('5', { command: 'true', env: { 'A-B': '1' } }), {
    message: 'Security Violation: invalid non-portable override keys: A-B.',
  });
  const ok = await exec.execute('6', { command: 'echo "$FOO"', env: { FOO: 'bar' } });
  assert.equal(text(ok), 'bar');
});

test('exec: the model env refuses B\'s keys and every variable that runs code, and nothing runs', async () => {
  const dir = fs.realpathSync(tempDir());
  const exec = api.createExecTool({ cwd: dir });
  const canary = path.join(dir, 'ran');
  await assert.rejects(exec.execute('1', { command: `touch ${canary}`, env: { CLASSPATH: '/x' } }), {
    message: "Security Violation: Environment variable 'CLASSPATH' is forbidden during host execution.",
  });
  await assert.rejects(exec.execute('2', { command: `touch ${canary}`, env: { HTTPS_PROXY: 'http://evil:8080' } }), {
    message: 'Security Violation: blocked override keys: HTTPS_PROXY.',
  });
  await assert.rejects(exec.execute('3', { command: `touch ${canary}`, env: { http_proxy: 'http://evil', NODE_TLS_REJECT_UNAUTHORIZED: '0' } }), {
    message: 'Security Violation: blocked override keys: NODE_TLS_REJECT_UNAUTHORIZED, http_proxy.',
  });
  // Each would run code of the model's choosing inside an otherwise harmless command.
  const payload = `touch ${canary}`;
  for (const env of [
    { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'core.pager', GIT_CONFIG_VALUE_0: payload },
    { GIT_EXTERNAL_DIFF: payload },
    { GIT_PAGER: payload },
    { PAGER: payload },
    { LESSOPEN: `|${payload}` },
    { BASH_FUNC_ls__: `() { ${payload}; }` },
    { PS4: `$(${payload})`, SHELLOPTS: 'xtrace' },
    { EDITOR: payload },
    { PYTHONWARNINGS: 'ignore::x.Y' },
    { npm_config_script_shell: '/bin/sh' },
  ]) {
    await assert.rejects(exec.execute('4', { command: 'git --version; ls; echo ok', env }), /Security Violation/, JSON.stringify(env));
  }
  assert.equal(fs.existsSync(canary), false);
  const ok = await exec.execute('5', { command: 'echo "$GIT_AUTHOR_NAME"', env: { GIT_AUTHOR_NAME: 'Agent' } });
  assert.equal(text(ok), 'Agent');
});

test('exec: elevated gate, host rules, background disabled warning', async () => {
  const exec = api.createExecTool({ messageProvider: 'slack', sessionKey: 'agent:main' });
  await assert.rejects(exec.execute('1', { command: 'true', elevated: true }), (e) => {
    assert.equal(
      e.message,
      [
        'elevated is not available right now (runtime=direct).',
        'Failing gates: enabled (tools.elevated.enabled / agents.list[].tools.elevated.enabled), allowFrom (tools.elevated.allowFrom.slack / agents.list[].tools.elevated.allowFrom.slack)',
        'Context: provider=slack session=agent:main',
        'Fix-it keys:',
        '- tools.elevated.enabled',
        '- tools.elevated.allowFrom.slack',
        '- agents.list[].tools.elevated.enabled',
        '- agents.list[].tools.elevated.allowFrom.slack',
      ].join('\n'),
    );
    return true;
  });
  await assert.rejects(exec.execute('2', { command: 'true', host: 'sandbox' }), /exec host=sandbox requires a sandbox runtime for this session\./);
  await assert.rejects(exec.execute('3', { command: 'true', host: 'node' }), /exec host=node needs a node host/);
  const sync = api.createExecTool({ allowBackground: false });
  const r = await sync.execute('4', { command: 'echo sync', background: true });
  assert.equal(text(r), 'Warning: background execution is disabled; running synchronously.\n\nsync');
  assert.equal(r.details.status, 'completed');
});

test('exec yields to the background; process polls, logs and lists it', async () => {
  const { exec, process: proc } = api.createBashTools({ scopeKey: 'agent:tools', profile: 'openclaw-2026-04' });
  const r = await exec.execute('1', { command: 'echo start; sleep 0.5; seq 1 250; exit 2', yieldMs: 100 });
  assert.equal(r.details.status, 'running');
  assert.match(text(r), /^Command still running \(session ([a-z]+-[a-z]+(-\d+)?), pid \d+\)\. Use process \(list\/poll\/log\/write\/kill\/clear\/remove\) for follow-up\.$/);
  const id = r.details.sessionId;
  track(r.details.pid);
  const listed = await proc.execute('2', { action: 'list' });
  assert.match(text(listed), new RegExp(`^${id} running   \\S+ :: echo start;`, 'm'));
  assert.equal(listed.details.status, 'completed');
  assert.equal(listed.details.sessions.find((s) => s.sessionId === id).name, 'echo start;');
  const { last, all } = await pollToExit(proc, id);
  assert.match(all, /start/);
  assert.match(text(last), /\n\nProcess exited with code 2\.$/);
  assert.equal(last.details.status, 'completed');
  assert.equal(last.details.exitCode, 2);
  const log = await proc.execute('3', { action: 'log', sessionId: id });
  assert.match(text(log), /\n\n\[showing last 200 of 251 lines; pass offset\/limit to page\]$/);
  assert.equal(log.details.totalLines, 251);
  assert.equal(text(await proc.execute('4', { action: 'log', sessionId: id, offset: 0, limit: 2 })), 'start\n1');
  assert.equal(text(await proc.execute('4b', { action: 'log', sessionId: id, limit: 1 })), '250');
  // Everything was read already: the poll says so instead of repeating the tail.
  const again = await proc.execute('5', { action: 'poll', sessionId: id });
  assert.equal(text(again), '(no new output)\n\nProcess exited with code 2.');
  assert.match(again.details.aggregated, /^start\n/);
  assert.equal(text(await proc.execute('6', { action: 'clear', sessionId: id })), `Cleared session ${id}.`);
  assert.equal(text(await proc.execute('7', { action: 'poll', sessionId: id })), `No session found for ${id}`);
});

test('a long foreground output stays within the text budget, and the text names the file with all of it', async () => {
  const exec = api.createExecTool({});
  for (const [command, lines] of [['seq 1 10000', 10000], ['seq 1 100000', 100000]]) {
    const r = await exec.execute('1', { command });
    const t = text(r);
    assert.ok(t.length < 30000 + 300, `${command}: ${t.length} chars of text`);
    const m = /\n\[\.\.\. (\d+) chars omitted; full output: (\/\S+) \.\.\.\]\n/.exec(t);
    assert.ok(m, t.slice(14000, 16000));
    assert.equal(r.details.outputFile, m[2]);
    const full = fs.readFileSync(m[2], 'utf8').split('\n').filter(Boolean);
    assert.equal(full.length, lines, 'the file holds every line');
    // Head and tail are whole lines: the first and the last survive, the marker sits between lines.
    assert.match(t, /^1\n2\n/);
    assert.match(t, new RegExp(`\\n${lines}$`));
    assert.ok(r.details.aggregated.length > t.length, 'details keep B\'s larger cap');
  }
  const small = api.createExecTool({ maxTextChars: 1000 });
  const r = await small.execute('2', { command: 'seq 1 2000' });
  assert.ok(text(r).length < 1200);
  assert.match(text(r), /chars omitted; full output: \//);
});

test('log pages through the whole output of a 300,000-line run, not only what the text kept', async () => {
  const { exec, process: proc } = api.createBashTools({});
  const r = await exec.execute('1', { command: 'seq 1 300000', background: true });
  const id = r.details.sessionId;
  await waitFor(async () => /Process exited/.test(text(await proc.execute('p', { action: 'poll', sessionId: id, timeout: 5000 }))), { what: 'the end' });
  const last = await proc.execute('2', { action: 'log', sessionId: id });
  assert.match(text(last), /^299801\n[\s\S]*\n300000\n\n\[showing last 200 of 300000 lines; pass offset\/limit to page\]$/);
  assert.equal(last.details.totalLines, 300000);
  assert.equal(text(await proc.execute('3', { action: 'log', sessionId: id, offset: 150000, limit: 3 })), '150001\n150002\n150003');
  assert.equal(text(await proc.execute('4', { action: 'log', sessionId: id, limit: 2 })), '299999\n300000');
  await proc.execute('x', { action: 'remove', sessionId: id });
});

test('a poll that could not keep everything starts at a line and says what is missing and where it is', async () => {
  // B's poll waits for the exit, so more arrives than one poll keeps (the default profile's poll returns
  // at the first unread output and rarely overflows).
  const { exec, process: proc } = api.createBashTools({ profile: 'openclaw-2026-04' });
  const r = await exec.execute('1', { command: 'seq 1 300000', background: true });
  let p;
  await waitFor(async () => {
    p = await proc.execute('p', { action: 'poll', sessionId: r.details.sessionId, timeout: 5000 });
    return /Process exited/.test(text(p));
  }, { what: 'the run to end' });
  const [marker, ...lines] = text(p).split('\n');
  assert.match(marker, /^\[\.\.\. \d+ earlier chars not shown: more arrived than one poll keeps; the full output is in \/.+ \.\.\.\]$/);
  const file = /in (\/\S+) \.\.\.\]$/.exec(marker)[1];
  assert.ok(fs.existsSync(file));
  // Whole lines: the first shown number is complete and the rest follow it.
  const first = Number(lines[0]);
  assert.match(lines[0], /^\d{6}$/);
  assert.equal(Number(lines[1]), first + 1);
  assert.equal(lines[lines.indexOf('300000') - 1], '299999');
  await proc.execute('x', { action: 'remove', sessionId: r.details.sessionId });
});

test('process failure texts', async () => {
  // B's texts (an unknown action is looked at after the session id); later ones: openclaw-later.test.js.
  const { exec, process: proc } = api.createBashTools({ profile: 'openclaw-2026-04' });
  assert.equal(text(await proc.execute('1', { action: 'poll' })), 'sessionId is required for this action.');
  assert.equal(text(await proc.execute('2', { action: 'explode' })), 'sessionId is required for this action.');
  assert.equal(text(await proc.execute('3', { action: 'explode', sessionId: 'x-y' })), 'Unknown action explode');
  for (const action of ['write', 'send-keys', 'submit', 'paste', 'kill']) {
    const r = await proc.execute('4', { action, sessionId: 'nope-nope' });
    assert.equal(text(r), 'No active session found for nope-nope');
    assert.equal(r.details.status, 'failed');
  }
  assert.equal(text(await proc.execute('5', { action: 'log', sessionId: 'nope-nope' })), 'No session found for nope-nope');
  assert.equal(text(await proc.execute('6', { action: 'clear', sessionId: 'nope-nope' })), 'No finished session found for nope-nope');
  assert.equal(text(await proc.execute('7', { action: 'remove', sessionId: 'nope-nope' })), 'No session found for nope-nope');
  // A foreground run is not the process tool's to touch.
  let id;
  const pending = exec.execute('8', { command: 'echo up; sleep 1', yieldMs: 20000 }, undefined, (u) => (id = u.details.sessionId));
  await waitFor(() => id, { what: 'the first update' });
  assert.equal(text(await proc.execute('9', { action: 'poll', sessionId: id })), `Session ${id} is not backgrounded.`);
  assert.equal(text(await proc.execute('10', { action: 'write', sessionId: id, data: 'x' })), `Session ${id} is not backgrounded.`);
  await pending;
  const bg = await exec.execute('11', { command: 'sleep 30', background: true });
  track(bg.details.pid);
  assert.equal(text(await proc.execute('12', { action: 'write', sessionId: bg.details.sessionId, data: 'x' })), `Session ${bg.details.sessionId} stdin is not writable.`);
  assert.equal(text(await proc.execute('13', { action: 'clear', sessionId: bg.details.sessionId })), `No finished session found for ${bg.details.sessionId}`);
  const removed = await proc.execute('14', { action: 'remove', sessionId: bg.details.sessionId });
  assert.equal(text(removed), `Removed session ${bg.details.sessionId}.`);
  assert.equal(alive(bg.details.pid), false);
});

test('process kill ends the tree; list formatting of finished sessions', async () => {
  const dir = tempDir();
  const pids = path.join(dir, 'pids');
  const { exec, process: proc } = api.createBashTools({ scopeKey: 'agent:kill' });
  const r = await exec.execute('1', { command: `sleep 300 & echo $! > ${pids}; wait`, background: true });
  track(r.details.pid);
  await waitFor(() => readPids(pids).length === 1, { what: 'child' });
  track(readPids(pids));
  const k = await proc.execute('2', { action: 'kill', sessionId: r.details.sessionId });
  // Later OpenClaw's text (the tree is gone by then all the same); B's below.
  assert.equal(text(k), `Termination requested for session ${r.details.sessionId}.`);
  assert.deepEqual(k.details, { status: 'completed', sessionId: r.details.sessionId, name: `sleep 300` });
  assert.equal(alive(readPids(pids)[0]), false);
  const april = api.createBashTools({ scopeKey: 'agent:kill', profile: 'openclaw-2026-04' });
  const r2 = await april.exec.execute('1b', { command: 'sleep 300', background: true });
  track(r2.details.pid);
  const k2 = await april.process.execute('2b', { action: 'kill', sessionId: r2.details.sessionId });
  assert.equal(text(k2), `Killed session ${r2.details.sessionId}.`);
  assert.deepEqual(k2.details, { status: 'failed', name: 'sleep 300' });
  assert.equal(alive(r2.details.pid), false);
  const listed = await proc.execute('3', { action: 'list' });
  assert.match(text(listed), new RegExp(`^${r.details.sessionId} failed    \\S+ :: sleep 300$`, 'm'));
  const other = api.createProcessTool({ scopeKey: 'agent:other' });
  assert.equal(text(await other.execute('4', { action: 'list' })), 'No running or recent sessions.');
  assert.equal(text(await other.execute('5', { action: 'poll', sessionId: r.details.sessionId })), `No session found for ${r.details.sessionId}`);
});

test('write with eof, submit, paste and a PTY session driven by send-keys to completion', async () => {
  const { exec, process: proc } = api.createBashTools({});
  const cat = await exec.execute('1', { command: 'cat', background: true, pty: false });
  track(cat.details.pid);
  // Pipe runs have stdin closed: cat already ended.
  await waitFor(async () => /Process exited/.test(text(await proc.execute('p', { action: 'poll', sessionId: cat.details.sessionId }))), { what: 'cat' });
  const py = await exec.execute('2', { command: 'python3 -i -q', background: true, pty: true });
  track(py.details.pid);
  const id = py.details.sessionId;
  // Wait on the session's whole output, not on concatenated poll texts: a prompt may arrive in pieces.
  const shown = (needle) => waitFor(async () => (await proc.execute('p', { action: 'poll', sessionId: id, timeout: 500 })).details.aggregated.includes(needle), { what: JSON.stringify(needle) });
  await shown('>>>');
  const sent = await proc.execute('3', { action: 'send-keys', sessionId: id, literal: 'x = 6 * 7', keys: ['enter'] });
  assert.equal(text(sent), `Sent 10 bytes to session ${id}.`);
  assert.equal(text(await proc.execute('4', { action: 'paste', sessionId: id, text: 'print(x)', bracketed: false })), `Pasted 8 chars to session ${id}.`);
  assert.equal(text(await proc.execute('5', { action: 'submit', sessionId: id })), `Submitted session ${id} (sent CR).`);
  await shown('42');
  const refused = await proc.execute('6', { action: 'send-keys', sessionId: id, keys: ['C-bogus'] });
  assert.equal(refused.details.status, 'failed');
  assert.match(text(refused), /^Unknown key "C-bogus"\. Accepted: /);
  await proc.execute('7', { action: 'send-keys', sessionId: id, keys: ['C-c'] });
  await shown('KeyboardInterrupt\n>>>');
  // Bytes, not UTF-16 characters: "é🚀" is 6 bytes.
  const unicode = await proc.execute('8a', { action: 'write', sessionId: id, data: '"é🚀"\r' });
  assert.equal(text(unicode), `Wrote 9 bytes to session ${id}.`);
  await shown("'é🚀'");
  const wrote = await proc.execute('8', { action: 'write', sessionId: id, data: 'exit()\r', eof: true });
  assert.equal(text(wrote), `Wrote 7 bytes to session ${id} (stdin closed).`);
  const { last } = await pollToExit(proc, id);
  assert.equal(last.details.status, 'completed', JSON.stringify(last));
});

test('a tool abort kills a foreground run but not a backgrounded one', { timeout: 30000 }, async () => {
  const exec = api.createExecTool({});
  const ac = new AbortController();
  const pending = exec.execute('1', { command: 'sleep 30' }, ac.signal);
  setTimeout(() => ac.abort(), 200);
  const r = await pending;
  assert.equal(r.details.status, 'failed');
  assert.equal(text(r), 'Command aborted');
  const ac2 = new AbortController();
  const bg = await exec.execute('2', { command: 'sleep 300', yieldMs: 50 }, ac2.signal);
  track(bg.details.pid);
  ac2.abort();
  // Whether the abort killed it shows in how it ended: by our own kill (killed: true), not by the abort.
  // The ignored abort must not stand in the way of that kill either.
  const started = Date.now();
  const killed = await api.killSession(bg.details.sessionId);
  assert.ok(Date.now() - started < 10000, 'the kill was not held up');
  assert.equal(killed.exitSignal, 'SIGTERM', JSON.stringify(killed));
  const ended = api.listSessions().find((s) => s.sessionId === bg.details.sessionId);
  assert.equal(ended.killed, true, 'the session ended before our kill: the abort ended it');
  assert.equal(alive(bg.details.pid), false);
  assert.equal(await api.removeSession(bg.details.sessionId), false, 'our kill had ended it');
});

test('onUpdate streams while running and stops after backgrounding', async () => {
  const updates = [];
  const exec = api.createExecTool({});
  const r = await exec.execute('1', { command: 'echo a; sleep 0.3; echo b; sleep 0.5; echo c', yieldMs: 500 }, undefined, (u) => updates.push(u));
  track(r.details.pid);
  assert.equal(r.details.status, 'running');
  const countAtYield = updates.length;
  assert.ok(countAtYield >= 1);
  assert.equal(updates[0].details.status, 'running');
  assert.match(updates[0].content[0].text, /a/);
  // b and c come after the yield. Once the session has ended, its output is all read; removing it drops
  // its callbacks, and calls already queued are delivered before the setImmediate after the removal.
  await waitFor(() => api.listSessions().find((s) => s.sessionId === r.details.sessionId)?.status === 'completed', { what: 'the end of the run' });
  assert.match(api.listSessions().find((s) => s.sessionId === r.details.sessionId).tail, /c\n$/);
  assert.equal(await api.removeSession(r.details.sessionId), false, 'it had ended: nothing to kill');
  await new Promise((res) => setImmediate(res));
  assert.equal(updates.length, countAtYield, 'no updates after backgrounding');
});

test('notifyOnExit sends the system event and a heartbeat once', async () => {
  const events = [];
  const beats = [];
  const exec = api.createExecTool({
    sessionKey: 'agent:main:chat',
    messageProvider: 'slack',
    currentChannelId: 'C123',
    currentThreadTs: '1700000000.000100',
    accountId: 'acct-1',
    onSystemEvent: (t, ctx) => events.push([t, ctx]),
    requestHeartbeat: (o) => beats.push(o),
  });
  const r = await exec.execute('1', { command: 'echo   finished   work; exit 1', background: true });
  await waitFor(() => events.length === 1, { what: 'the event' });
  assert.equal(events[0][0], `Exec completed (${r.details.sessionId.slice(0, 8)}, code 1) :: finished work`);
  // Command output is never a trusted system line, and the notice goes back to the thread it came from.
  assert.deepEqual(events[0][1], {
    sessionKey: 'agent:main:chat',
    command: 'echo   finished   work; exit 1',
    trusted: false,
    deliveryContext: { channel: 'slack', to: 'C123', accountId: 'acct-1', threadId: '1700000000.000100' },
  });
  // Later OpenClaw asks for the wake at once: no coalescing delay.
  assert.deepEqual(beats, [{ source: 'exec-event', intent: 'event', reason: 'exec-event', coalesceMs: 0, sessionKey: 'agent:main:chat' }]);
  const quiet = await exec.execute('2', { command: 'true', background: true });
  await waitFor(() => api.listSessions().find((s) => s.sessionId === quiet.details.sessionId)?.status === 'completed', { what: 'exit' });
  // Empty success is not announced by default: the next event (below) must be the next run's, not this one's.
  // A key that is not agent-scoped: the heartbeat wake carries no session key (B).
  const loudBeats = [];
  // A long last line is cut at a word start, never mid-word; an agent's kill is reported as a kill.
  const cut = await exec.execute('2b', { command: "for i in $(seq 1 200); do printf 'word%03d ' $i; done; echo; exit 3", background: true });
  await waitFor(() => events.length === 2, { what: 'the long-line event' });
  assert.match(events[1][0], new RegExp(`^Exec completed \\(${cut.details.sessionId.slice(0, 8)}, code 3\\) :: word\\d{3} word`));
  const proc = api.createProcessTool({});
  const long = await exec.execute('2c', { command: 'echo started; sleep 30', background: true });
  await waitFor(() => api.listSessions().find((s) => s.sessionId === long.details.sessionId)?.tail === 'started\n', { what: 'the first line' });
  await proc.execute('k', { action: 'kill', sessionId: long.details.sessionId });
  await waitFor(() => events.length === 3, { what: 'the kill event' });
  assert.match(events[2][0], new RegExp(`^Exec killed \\(${long.details.sessionId.slice(0, 8)}, signal SIGTERM\\) :: started$`));
  events.splice(1, 2);
  const loud = api.createExecTool({ sessionKey: 'k', notifyOnExitEmptySuccess: true, onSystemEvent: (t, ctx) => events.push([t, ctx]), requestHeartbeat: (o) => loudBeats.push(o) });
  const l = await loud.execute('3', { command: 'true', background: true });
  await waitFor(() => events.length === 2, { what: 'the empty-success event' });
  assert.equal(events[1][0], `Exec completed (${l.details.sessionId.slice(0, 8)}, code 0)`);
  assert.equal(events[1][1].trusted, false);
  assert.equal(events[1][1].deliveryContext, undefined, 'no chat context given, none sent');
  assert.deepEqual(loudBeats, [{ source: 'exec-event', intent: 'event', reason: 'exec-event', coalesceMs: 0 }]);
});

test('approval-pending, then the run after the decision', async () => {
  const dir = tempDir();
  const events = [];
  const exec = api.createExecTool({
    security: 'allowlist',
    ask: 'on-miss',
    approvalsFile: path.join(dir, 'approvals.json'),
    deferApprovals: true,
    sessionKey: 'agent:main',
    onApproval: async () => 'allow-once',
    onSystemEvent: (t) => events.push(t),
  });
  const r = await exec.execute('1', { command: 'echo approved' });
  assert.equal(r.details.status, 'approval-pending');
  assert.match(text(r), /^Approval required \(id [0-9a-f]{8}, full [0-9a-f-]{36}\)\.\nHost: gateway\nCWD: .+\nCommand:\n```sh\necho approved/);
  assert.match(text(r), /Reply with: \/approve [0-9a-f]{8} allow-once\|allow-always\|deny/);
  assert.equal(r.details.approvalSlug, r.details.approvalId.slice(0, 8));
  assert.deepEqual(r.details.allowedDecisions, ['allow-once', 'allow-always', 'deny']);
  await waitFor(() => events.some((e) => e.startsWith(`Exec finished (gateway id=${r.details.approvalId}`)), { what: 'the finished event' });
  assert.match(events.find((e) => e.startsWith('Exec finished')), /code 0\)\napproved/);
  const denying = api.createExecTool({
    security: 'allowlist',
    ask: 'on-miss',
    approvalsFile: path.join(dir, 'approvals.json'),
    deferApprovals: true,
    onApproval: async () => 'deny',
    onSystemEvent: (t) => events.push(t),
  });
  const victim = path.join(dir, 'victim');
  fs.mkdirSync(victim);
  const { result: d, spawned } = await watchSpawns(async () => {
    const pending = await denying.execute('2', { command: `rm -rf ${victim}` });
    assert.equal(pending.details.status, 'approval-pending');
    await waitFor(() => events.some((e) => e === `Exec denied (gateway id=${pending.details.approvalId}, user denied): rm -rf ${victim}`), { what: 'the denied event' });
    return pending;
  });
  assert.ok(d.details.approvalId);
  assert.deepEqual(spawned, [], 'a deferred denial left processes');
  assert.equal(fs.existsSync(victim), true, 'a deferred denial ran rm');
  // The approval events carry the model's command and its output: untrusted, like exit notices.
  const contexts = [];
  const watched = api.createExecTool({
    security: 'allowlist',
    ask: 'on-miss',
    approvalsFile: path.join(dir, 'approvals.json'),
    deferApprovals: true,
    sessionKey: 'agent:a',
    onApproval: async () => 'deny',
    onSystemEvent: (t, ctx) => contexts.push(ctx),
  });
  const w = await watched.execute('3', { command: 'rm -rf /tmp/nothing-here-either' });
  await waitFor(() => contexts.length === 1, { what: 'the denied event' });
  assert.deepEqual(contexts[0], { sessionKey: 'agent:a', contextKey: `exec:${w.details.approvalId}`, trusted: false });
});

test('approvals awaited by default: a denial is a failed result', async () => {
  const dir = tempDir();
  const exec = api.createExecTool({ cwd: dir, security: 'allowlist', ask: 'on-miss', approvalsFile: path.join(dir, 'a.json'), onApproval: async () => 'deny' });
  const { result: r, spawned } = await watchSpawns(() => exec.execute('1', { command: 'touch nope' }));
  assert.equal(r.details.status, 'failed');
  assert.deepEqual(spawned, [], 'a denial left processes');
  assert.equal(text(r), 'exec denied: user denied');
  // Nothing ran: the file the command would have made is not there.
  assert.equal(fs.existsSync(path.join(dir, 'nope')), false);
});

test('OpenClaw environment variables and their clamps', () => {
  const script = `
    const api = require(${JSON.stringify(path.join(__dirname, '..', 'js', 'index.js'))});
    const shared = require(${JSON.stringify(path.join(__dirname, '..', 'js', 'tools', 'shared.js'))});
    api.createProcessTool(process.env.CLEANUP ? { cleanupMs: Number(process.env.CLEANUP) } : {});
    console.log(JSON.stringify({
      yieldMs: shared.defaultYieldMs(), max: shared.maxOutputChars(), pending: shared.pendingMaxOutputChars(),
      ttl: api.getSessionTtl(), nativeTtl: require(${JSON.stringify(path.join(__dirname, '..', 'index.js'))}).getSessionTtl(),
    }));`;
  const runWith = (env) =>
    JSON.parse(require('node:child_process').execFileSync(process.execPath, ['-e', script], { env: { ...process.env, ...env }, encoding: 'utf8' }));
  assert.deepEqual(runWith({ PI_BASH_YIELD_MS: '5', PI_BASH_MAX_OUTPUT_CHARS: '10', OPENCLAW_BASH_PENDING_MAX_OUTPUT_CHARS: '999999', CLEANUP: '5' }), {
    yieldMs: 10, max: 1000, pending: 200000, ttl: 60000, nativeTtl: 60000,
  });
  assert.deepEqual(runWith({ PI_BASH_YIELD_MS: '500000', PI_BASH_MAX_OUTPUT_CHARS: 'abc', CLAWDBOT_BASH_PENDING_MAX_OUTPUT_CHARS: '5000', CLEANUP: '99999999999' }), {
    yieldMs: 120000, max: 200000, pending: 5000, ttl: 10800000, nativeTtl: 10800000,
  });
  assert.deepEqual(runWith({ CLEANUP: '0' }).ttl, 1800000, 'cleanupMs 0 means the default');
  assert.deepEqual(runWith({ PI_BASH_YIELD_MS: '', PI_BASH_JOB_TTL_MS: '120000' }), {
    yieldMs: 10000, max: 200000, pending: 30000, ttl: 120000, nativeTtl: 120000,
  });
});

test('approval-pending offers allow-always only where it would not trust a whole runner', async () => {
  const dir = tempDir();
  const exec = api.createExecTool({ cwd: dir, security: 'allowlist', ask: 'on-miss', approvalsFile: path.join(dir, 'a.json'), deferApprovals: true, onApproval: async () => 'deny' });
  const runner = await exec.execute('1', { command: 'python3 -c "print(1)"' });
  assert.equal(runner.details.status, 'approval-pending');
  assert.deepEqual(runner.details.allowedDecisions, ['allow-once', 'deny']);
  assert.match(text(runner), /Reply with: \/approve [0-9a-f]{8} allow-once\|deny$/m);
  const plain = await exec.execute('2', { command: 'uname -s' });
  assert.deepEqual(plain.details.allowedDecisions, ['allow-once', 'allow-always', 'deny']);
});
