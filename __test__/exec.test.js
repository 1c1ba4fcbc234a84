'use strict';
// Foreground exec over pipes: capture, exit classification, kills, caps, ANSI, drain, bad input.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const crypto = require('node:crypto');
const { spawnSync } = require('node:child_process');

const { native, alive, waitFor, track, killTracked, readPids, tempDir, run } = require('./helpers.js');

test.after(killTracked);

test('captures stdout and stderr, interleaved in arrival order', async () => {
  const r = await run({ command: 'echo one; sleep 0.05; echo two >&2; sleep 0.05; echo three' });
  assert.equal(r.status, 'completed');
  assert.equal(r.exitCode, 0);
  assert.equal(r.output, 'one\ntwo\nthree\n');
  assert.equal(r.tail, r.output);
  assert.equal(r.truncated, false);
  assert.equal(r.outputFile, undefined);
  assert.match(r.sessionId, /^[a-z]+-[a-z]+(-\d+)?$/);
  assert.ok(r.pid > 0);
});

test('exit codes: 0 and 1 complete, 126 and 127 fail with reasons', async () => {
  const ok = await run({ command: 'exit 0' });
  assert.equal(ok.status, 'completed');
  assert.equal(ok.reason, undefined);
  const one = await run({ command: 'exit 1' });
  assert.equal(one.status, 'completed');
  assert.equal(one.exitCode, 1);
  const dir = tempDir();
  const script = path.join(dir, 'not-executable.sh');
  fs.writeFileSync(script, 'echo hi\n', { mode: 0o644 });
  const noexec = await run({ command: script });
  assert.equal(noexec.status, 'failed');
  assert.equal(noexec.exitCode, 126);
  assert.equal(noexec.reason, 'Command not executable (permission denied)');
  const missing = await run({ command: 'no-such-command-agent-exec' });
  assert.equal(missing.status, 'failed');
  assert.equal(missing.exitCode, 127);
  assert.equal(missing.reason, 'Command not found');
  assert.match(missing.output, /not found/);
});

test('a signal death is a failure naming the signal', async () => {
  const r = await run({ command: 'echo before; kill -KILL $$' });
  assert.equal(r.status, 'failed');
  assert.equal(r.exitSignal, 'SIGKILL');
  assert.equal(r.exitCode, undefined);
  assert.equal(r.reason, 'Command aborted by signal SIGKILL');
  assert.equal(r.output, 'before\n');
});

test('a timeout kills a pipeline and its grandchildren', async () => {
  const dir = tempDir();
  const pids = path.join(dir, 'pids');
  const started = Date.now();
  const r = await run({
    command: `(sleep 300 & echo $! >> ${pids}; sh -c 'sleep 301 & echo $! >> ${pids}; wait' & wait) | cat; echo never`,
    timeoutMs: 700,
    killGraceMs: 500,
  });
  assert.equal(r.status, 'failed');
  assert.equal(r.timedOut, true);
  assert.equal(r.reason, 'Command timed out after 0.7 seconds');
  assert.ok(Date.now() - started < 8000);
  const children = readPids(pids);
  track(children);
  assert.equal(children.length, 2, 'both grandchildren started');
  for (const pid of children) assert.equal(alive(pid), false, `pid ${pid} survived the timeout`);
  assert.equal(alive(r.pid), false);
  assert.deepEqual(r.survivors, []);
  assert.ok(!r.output.includes('never'));
});

test('SIGTERM is ignored: the grace period ends in SIGKILL', async () => {
  const r = await run({ command: "trap '' TERM; sleep 300 & wait; while :; do sleep 1; done", timeoutMs: 300, killGraceMs: 300 });
  assert.equal(r.status, 'failed');
  assert.equal(r.timedOut, true);
  assert.equal(r.exitSignal, 'SIGKILL');
});

test('abort ends a foreground run and its tree', async () => {
  const dir = tempDir();
  const pids = path.join(dir, 'pids');
  const ac = new AbortController();
  const pending = run({ command: `sleep 300 & echo $! > ${pids}; echo ready; wait`, signal: ac.signal, onOutput: () => {} });
  await waitFor(() => readPids(pids).length === 1, { what: 'the child to start' });
  ac.abort();
  const r = await pending;
  track(readPids(pids));
  assert.equal(r.status, 'failed');
  assert.equal(r.aborted, true);
  assert.equal(r.reason, 'Command aborted');
  assert.equal(alive(readPids(pids)[0]), false);
});

test('an already aborted signal ends the run at once', async () => {
  const r = await run({ command: 'sleep 300', signal: AbortSignal.abort() });
  assert.equal(r.aborted, true);
  assert.equal(r.status, 'failed');
});

test('cwd and env reach the command; pipe runs get the non-interactive defaults', async () => {
  const dir = fs.realpathSync(tempDir());
  const r = await run({
    command: 'pwd; echo "$FOO|$PAGER|$GIT_PAGER|$GIT_EDITOR|$GIT_TERMINAL_PROMPT"',
    cwd: dir,
    env: { FOO: 'bar baz' },
  });
  assert.equal(r.output, `${dir}\nbar baz|cat|cat|true|0\n`);
  assert.equal(r.cwd, dir);
  const custom = await run({ command: 'echo "$PAGER"', env: { PAGER: 'less' } });
  assert.equal(custom.output, 'less\n');
  const clean = await run({ command: 'echo "${HOME:-unset}"', inheritEnv: false, env: { PATH: process.env.PATH } });
  assert.equal(clean.output, 'unset\n');
});

test('modelEnv follows the host env policy; hostEnvPolicy drops dangerous inherited variables', async () => {
  await assert.rejects(native.exec({ command: 'true', modelEnv: { LD_PRELOAD: '/x.so' } }), {
    code: 'ERR_ENV_FORBIDDEN',
    message: "Security Violation: Environment variable 'LD_PRELOAD' is forbidden during host execution.",
  });
  await assert.rejects(native.exec({ command: 'true', modelEnv: { PATH: '/x' } }), { code: 'ERR_ENV_FORBIDDEN' });
  assert.throws(() => require('../js/index.js').checkModelEnv({ NODE_OPTIONS: 'x', BASH_ENV: 'y' }), {
    code: 'ERR_ENV_FORBIDDEN',
    message: 'Security Violation: blocked override keys: BASH_ENV, NODE_OPTIONS.',
  });
  process.env.LD_AGENT_EXEC_TEST = 'inherited';
  try {
    const r = await run({
      command: 'echo "${LD_AGENT_EXEC_TEST:-dropped} $MODEL $TOOL"',
      hostEnvPolicy: 'openclaw',
      modelEnv: { MODEL: 'm', TOOL: 'from-model' },
      env: { TOOL: 'from-tool' },
    });
    assert.equal(r.output, 'dropped m from-tool\n');
    const plain = await run({ command: 'echo "$LD_AGENT_EXEC_TEST"' });
    assert.equal(plain.output, 'inherited\n');
  } finally {
    delete process.env.LD_AGENT_EXEC_TEST;
  }
  await assert.rejects(native.exec({ command: 'true', hostEnvPolicy: 'strict' }), { code: 'ERR_INVALID_OPTION' });
});

test('stdin is closed by default, so cat returns at once', async () => {
  const r = await run({ command: 'cat; echo done', timeoutMs: 20000 });
  assert.equal(r.output, 'done\n');
  assert.equal(r.timedOut, false);
});

test('output over the cap keeps head and tail with a marker, and the full log on disk', async () => {
  const r = await run({ command: 'seq 1 20000', maxOutputChars: 1000 });
  assert.equal(r.status, 'completed');
  assert.equal(r.truncated, true);
  const full = Array.from({ length: 20000 }, (_, i) => `${i + 1}\n`).join('');
  assert.equal(r.totalChars, full.length);
  assert.equal(r.omittedChars, full.length - 1000);
  assert.ok(r.output.startsWith('1\n2\n3\n'));
  assert.ok(r.output.endsWith('19999\n20000\n'));
  assert.match(r.output, new RegExp(`\\[\\.\\.\\. ${full.length - 1000} chars omitted \\.\\.\\.\\]`));
  assert.ok(r.outputFile, 'outputFile is set');
  assert.equal(fs.readFileSync(r.outputFile, 'utf8'), full);
  assert.equal((fs.statSync(r.outputFile).mode & 0o777) & 0o077, 0, 'log is private to the user');
  fs.rmSync(r.outputFile);
});

test('the log file stops at maxLogBytes and says so', async () => {
  const r = await run({ command: 'seq 1 100000', maxOutputChars: 1000, maxLogBytes: 4096 });
  assert.equal(r.truncated, true);
  assert.equal(fs.statSync(r.outputFile).size, 4096);
  assert.ok(r.output.endsWith('100000\n'), 'the text tail still has the end');
  assert.match(r.warnings.join('\n'), /the output log reached its size cap \(4096 bytes\)/);
  fs.rmSync(r.outputFile);
});

test('ANSI escapes are stripped and progress redraws collapse', async () => {
  const r = await run({
    command: "printf '\\033[1;31mred\\033[0m \\033]0;title\\007plain\\n'; printf '10%%\\r50%%\\r\\033[K100%%\\n'",
  });
  assert.equal(r.output, 'red plain\n100%\n');
});

test('a background child holding the pipes does not hang the call', async () => {
  const started = Date.now();
  const r = await run({ command: 'sleep 100 & echo started', drainTimeoutMs: 500 });
  assert.ok(Date.now() - started < 5000, 'returned within the drain window');
  assert.equal(r.status, 'completed');
  assert.equal(r.output, 'started\n');
  assert.equal(r.leftRunning.length, 1);
  assert.ok(alive(r.leftRunning[0]));
  assert.match(r.warnings.join('\n'), /kept running after it exited/);
  process.kill(r.leftRunning[0], 'SIGKILL');
});

test('1 MiB of binary output: text is sanitised, the log keeps every byte', async () => {
  const dir = tempDir();
  const file = path.join(dir, 'blob');
  const blob = crypto.randomBytes(1 << 20);
  fs.writeFileSync(file, blob);
  const r = await run({ command: `cat ${file}` });
  assert.equal(r.status, 'completed');
  assert.equal(r.truncated, true);
  assert.ok(r.output.length < 210000);
  assert.ok(!/[\x00-\x08\x1b]/.test(r.output), 'no raw control bytes in the text');
  const raw = fs.readFileSync(r.outputFile);
  assert.equal(raw.length, blob.length);
  assert.ok(raw.equals(blob));
  fs.rmSync(r.outputFile);
});

test('onOutput streams every chunk before exec resolves, onExit fires once', async () => {
  const chunks = [];
  const exits = [];
  const r = await run({
    command: 'for i in 1 2 3; do echo line$i; sleep 0.02; done; echo err >&2',
    onOutput: (c) => chunks.push(c),
    onExit: (i) => exits.push(i),
  });
  const out = chunks.filter((c) => c.stream === 'stdout').map((c) => c.text).join('');
  const err = chunks.filter((c) => c.stream === 'stderr').map((c) => c.text).join('');
  assert.equal(out, 'line1\nline2\nline3\n');
  assert.equal(err, 'err\n');
  await waitFor(() => exits.length === 1, { what: 'onExit' });
  assert.equal(exits[0].sessionId, r.sessionId);
  assert.equal(exits[0].exitCode, 0);
});

test('shell: an explicit shell is used; an unknown one is a typed error', async () => {
  const r = await run({ command: 'echo "${BASH_VERSION:+bash}"', shell: 'bash' });
  assert.equal(r.output, 'bash\n');
  await assert.rejects(native.exec({ command: 'true', shell: 'no-such-shell-xyz' }), {
    code: 'ERR_UNKNOWN_SHELL',
    message: /no-such-shell-xyz/,
  });
});

test('shell: the host $SHELL runs the command; with none set, sh does', () => {
  // A child Node process, so that its $SHELL is its own (this process pins bash for the suite).
  const probe = (env) => {
    const script = `require(${JSON.stringify(path.join(__dirname, '../js/index.js'))}).exec({ command: 'echo "$0"' }).then((r) => process.stdout.write(r.output))`;
    const r = spawnSync(process.execPath, ['-e', script], { env, encoding: 'utf8', timeout: 20000 });
    assert.equal(r.status, 0, r.stderr);
    return path.basename(r.stdout.trim());
  };
  const { SHELL, ...withoutShell } = process.env;
  assert.equal(probe(withoutShell), 'sh');
  assert.equal(probe({ ...withoutShell, SHELL: '/bin/bash' }), 'bash');
});

test('an unknown option is refused with the nearest known name, before anything runs', async () => {
  const dir = tempDir();
  const canary = path.join(dir, 'ran');
  await assert.rejects(native.exec({ command: `touch ${canary}`, timout: 5 }), {
    code: 'ERR_INVALID_OPTION',
    message: 'Unknown exec option "timout". Did you mean "timeoutMs"?',
  });
  await assert.rejects(native.exec({ command: `touch ${canary}`, timeout: 5 }), { message: 'Unknown exec option "timeout". Did you mean "timeoutMs"?' });
  await assert.rejects(native.exec({ command: `touch ${canary}`, workdir: dir }), { message: /^Unknown exec option "workdir"\. Known options: command, cwd, / });
  assert.equal(fs.existsSync(canary), false);
  // A known option, or an unknown one left undefined (as object spreads leave them), is fine.
  const r = await native.exec({ command: 'true', timeoutMs: 5000, extra: undefined });
  assert.equal(r.exitCode, 0);
});

test('the options exec accepts are exactly the ones its type declares', async () => {
  const dts = fs.readFileSync(path.join(__dirname, '..', 'index.d.ts'), 'utf8');
  const body = /export interface ExecOptions \{([\s\S]*?)\n\}/.exec(dts)[1];
  const declared = [...body.matchAll(/^  (\w+)\??:/gm)].map((m) => m[1]).sort();
  let accepted;
  await assert.rejects(native.exec({ command: 'true', qqqqqqqq: 1 }), (e) => {
    accepted = /Known options: (.*)\.$/.exec(e.message)[1].split(', ').sort();
    return e.code === 'ERR_INVALID_OPTION';
  });
  assert.ok(declared.length > 20, `parsed ${declared.length} declared options`);
  assert.deepEqual(accepted, declared);
});

test('a command too long for the OS says so (E2BIG), once, with what to do', async () => {
  await assert.rejects(native.exec({ command: `echo ${'x'.repeat(300000)}` }), (e) => {
    assert.equal(e.code, 'ERR_SPAWN_FAILED');
    assert.match(e.message, /^The command is too long for the operating system \(300005 bytes of command, plus the environment; E2BIG\)\. Write it to a script file/);
    return true;
  });
});

test('bad input gets a typed error with a stable code and an actionable message', async () => {
  const dir = tempDir();
  const file = path.join(dir, 'file');
  fs.writeFileSync(file, '');
  const cases = [
    [{ command: '' }, 'ERR_INVALID_COMMAND', /command is empty/],
    [{ command: '   ' }, 'ERR_INVALID_COMMAND', /empty/],
    [{ command: 42 }, 'ERR_INVALID_COMMAND', /must be a string, but it is a number/],
    [{}, 'ERR_INVALID_COMMAND', /missing/],
    [undefined, 'ERR_INVALID_COMMAND', /options object/],
    [{ command: 'echo a\0b' }, 'ERR_NUL_BYTE', /NUL byte/],
    [{ command: 'true', env: { A: 'x\0y' } }, 'ERR_NUL_BYTE', /"A"/],
    [{ command: 'true', cwd: path.join(dir, 'missing') }, 'ERR_INVALID_CWD', /does not exist/],
    [{ command: 'true', cwd: file }, 'ERR_INVALID_CWD', /not a directory/],
    [{ command: 'true', env: { A: 1 } }, 'ERR_INVALID_ENV', /"A" must be a string, but it is a number/],
    [{ command: 'true', env: { A: null } }, 'ERR_INVALID_ENV', /"A" must be a string/],
    [{ command: 'true', env: 'A=1' }, 'ERR_INVALID_ENV', /object/],
    [{ command: 'true', env: { 'A=B': 'x' } }, 'ERR_INVALID_ENV', /contains '='/],
    [{ command: 'true', timeoutMs: -1 }, 'ERR_INVALID_OPTION', /timeoutMs .* at least 0/],
    [{ command: 'true', timeoutMs: 'soon' }, 'ERR_INVALID_OPTION', /timeoutMs option must be a number/],
    [{ command: 'true', timeoutMs: NaN }, 'ERR_INVALID_OPTION', /finite/],
    [{ command: 'true', stdin: 'open' }, 'ERR_INVALID_OPTION', /"closed" or "pipe"/],
    [{ command: 'true', maxOutputChars: 0 }, 'ERR_INVALID_OPTION', /maxOutputChars/],
    [{ command: 'true', shell: '' }, 'ERR_UNKNOWN_SHELL', /empty/],
    [{ command: 'true', onOutput: 'yes' }, 'ERR_INVALID_OPTION', /onOutput option must be a function/],
  ];
  for (const [options, code, message] of cases) {
    await assert.rejects(native.exec(options), (e) => {
      assert.ok(e instanceof Error, 'an Error instance');
      assert.equal(e.code, code, `code for ${JSON.stringify(options)}`);
      assert.match(e.message, message);
      return true;
    });
  }
});
