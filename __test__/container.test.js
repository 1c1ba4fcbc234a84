'use strict';
// The container host (issue 37) against a real engine: CI serves one with Podman
// (scripts/podman-engine.sh) and names it in AGENT_EXEC_TEST_ENGINE (a DOCKER_HOST address), with an
// image made locally from busybox (AGENT_EXEC_TEST_IMAGE). Each test checks the engine's own view
// (its containers, the processes left in them), not only what the runtime says.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const { spawn } = require('node:child_process');

const { native, tempDir, waitFor, killTracked } = require('./helpers.js');

test.after(killTracked);

const engine = process.env.AGENT_EXEC_TEST_ENGINE || '';
const image = process.env.AGENT_EXEC_TEST_IMAGE || 'localhost/agent-exec-test:busybox';
const required = (process.env.AGENT_EXEC_TEST_REQUIRE || '').split(',').includes('container-engine');
if (required && !engine) throw new Error('AGENT_EXEC_TEST_REQUIRE promises a container engine, but AGENT_EXEC_TEST_ENGINE is not set');
const noEngine = !engine && 'no container engine here (AGENT_EXEC_TEST_ENGINE names one; scripts/podman-engine.sh serves one)';
const when = (...reasons) => ({ skip: reasons.find(Boolean) || false, timeout: 120000 });

/** A GET of the engine's API (only unix:// engines are asked directly here). */
function engineGet(urlPath) {
  const socketPath = engine.replace(/^unix:\/\//, '');
  return new Promise((resolve, reject) => {
    const req = http.get({ socketPath, path: urlPath }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => {
        try {
          resolve(JSON.parse(body));
        } catch (e) {
          reject(new Error(`${urlPath}: ${body}`));
        }
      });
    });
    req.on('error', reject);
  });
}

/** The containers this runtime made for the host process `pid`, running or not. */
async function containersOf(pid) {
  const filters = encodeURIComponent(JSON.stringify({ label: [`dev.agent-exec.owner=${pid}`] }));
  return engineGet(`/containers/json?all=true&filters=${filters}`);
}

const host = (extra = {}) => ({ container: { image, engine, network: 'none', ...extra } });
let scopeSeq = 0;
const newScope = () => `container-test-${process.pid}-${++scopeSeq}`;

/** The processes of the scope's container as `ps` lists them (pid and arguments). */
async function processesIn(scopeKey, cwd) {
  const r = await native.exec({ command: 'ps -o pid,args', cwd, scopeKey, host: host() });
  return r.output;
}

test('a run in a container: output, stderr, exit code, the workspace bound at the same path, the scope\'s container reused', when(noEngine), async () => {
  const cwd = fs.realpathSync(tempDir());
  fs.writeFileSync(path.join(cwd, 'from-host.txt'), 'host file\n');
  const scopeKey = newScope();
  const r = await native.exec({ command: 'cat from-host.txt; echo made > made.txt; echo oops >&2; pwd; exit 7', cwd, scopeKey, host: host() });
  assert.equal(r.exitCode, 7, r.output);
  assert.match(r.output, /host file\n/);
  assert.match(r.output, /oops/);
  assert.match(r.output, new RegExp(`${cwd}\\n`));
  assert.equal(fs.readFileSync(path.join(cwd, 'made.txt'), 'utf8'), 'made\n');
  // The host's variables stay on the host; the caller's and the model's go in.
  const env = await native.exec({ command: 'echo "[$HOME_ON_HOST][$GIVEN][$MODEL]"', cwd, scopeKey, env: { GIVEN: 'yes' }, modelEnv: { MODEL: 'm' }, host: host() });
  assert.equal(env.output, '[][yes][m]\n');
  const first = await native.exec({ command: 'echo kept > /tmp/mark; hostname', cwd, scopeKey, host: host() });
  const second = await native.exec({ command: 'cat /tmp/mark; hostname', cwd, scopeKey, host: host() });
  assert.equal(second.output, `kept\n${first.output}`);
  assert.equal((await containersOf(process.pid)).filter((c) => c.Labels['dev.agent-exec.scope'] === scopeKey).length, 1);
});

test('stdin is the run\'s: written, then closed (end of file reaches the command)', when(noEngine), async () => {
  const cwd = fs.realpathSync(tempDir());
  const scopeKey = newScope();
  const bg = await native.exec({ command: 'cat; echo "[eof]"', cwd, scopeKey, stdin: 'pipe', background: true, host: host() });
  await native.writeStdin(bg.sessionId, 'hello container\n', { scopeKey, eof: true });
  await waitFor(() => native.getSession(bg.sessionId, { scopeKey })?.status !== 'running', { what: 'the run to end after its stdin closed', timeoutMs: 30000 });
  assert.equal(native.readLog(bg.sessionId, { scopeKey }).text, 'hello container\n[eof]');
});

test('a timeout and a kill end the whole tree inside the container, background and orphaned processes included', when(noEngine), async () => {
  const cwd = fs.realpathSync(tempDir());
  const scopeKey = newScope();
  // A background child, an orphan that left its parent (reparented to the container's pid 1), and
  // the foreground sleep: all carry the run's marker.
  const tree = 'sleep 301 & (sleep 302 &) ; sleep 303';
  const timed = await native.exec({ command: tree, cwd, scopeKey, timeoutMs: 1500, host: host() });
  assert.equal(timed.timedOut, true, JSON.stringify(timed));
  assert.doesNotMatch(await processesIn(scopeKey, cwd), /sleep 30[123]/);
  const bg = await native.exec({ command: tree.replace(/30/g, '40'), cwd, scopeKey, background: true, host: host() });
  await waitFor(async () => /sleep 403/.test(await processesIn(scopeKey, cwd)), { what: 'the background tree to start', timeoutMs: 20000 });
  const killed = await native.killSession(bg.sessionId, { scopeKey });
  assert.ok(killed, 'the kill reports');
  await waitFor(async () => (await native.pollSession(bg.sessionId, { scopeKey })).status !== 'running', { what: 'the killed run to end', timeoutMs: 30000 });
  assert.doesNotMatch(await processesIn(scopeKey, cwd), /sleep 40[123]/);
});

/** Wait until the session's log matches `re`; returns the log. */
async function logMatches(sessionId, scopeKey, re, what) {
  let text = '';
  await waitFor(() => re.test((text = native.readLog(sessionId, { scopeKey }).text)), { what, timeoutMs: 30000 });
  return text;
}

test('a PTY in the container: a terminal of the asked size, TERM, stderr merged, keys, resize', when(noEngine), async () => {
  const cwd = fs.realpathSync(tempDir());
  const scopeKey = newScope();
  const fg = await native.exec({ command: '[ -t 0 ] && [ -t 1 ] && echo "tty:yes"; stty size; echo "term:$TERM"; echo "err" >&2', cwd, scopeKey, pty: { cols: 91, rows: 27 }, host: host() });
  assert.equal(fg.exitCode, 0, fg.output);
  assert.match(fg.output, /tty:yes\n27 91\nterm:xterm-256color\nerr\n/);
  // The caller's TERM wins.
  const own = await native.exec({ command: 'echo "term:$TERM"', cwd, scopeKey, pty: true, env: { TERM: 'vt100' }, host: host() });
  assert.match(own.output, /term:vt100/);
  // Keys reach the program through the terminal (its echo included); a resize reaches stty.
  const bg = await native.exec({ command: 'echo ready; read line; echo "got:$line"; read x; stty size', cwd, scopeKey, pty: true, background: true, host: host() });
  await logMatches(bg.sessionId, scopeKey, /ready/, 'the PTY run to start');
  await native.sendKeys(bg.sessionId, { literal: 'hello there', keys: ['enter'], scopeKey });
  await logMatches(bg.sessionId, scopeKey, /got:hello there/, 'the keys to arrive');
  await native.resizePty(bg.sessionId, 100, 40, { scopeKey });
  await native.writeStdin(bg.sessionId, '\r', { scopeKey });
  await logMatches(bg.sessionId, scopeKey, /40 100/, 'the new size to reach stty');
  await waitFor(async () => (await native.pollSession(bg.sessionId, { scopeKey })).status !== 'running', { what: 'the PTY run to end', timeoutMs: 30000 });
  assert.equal(native.getSession(bg.sessionId, { scopeKey }).exitCode, 0);
  // A pipe run in the container is not a terminal.
  const pipe = await native.exec({ command: 'sleep 30', cwd, scopeKey, background: true, host: host() });
  await assert.rejects(native.resizePty(pipe.sessionId, 80, 24, { scopeKey }), { code: 'ERR_NOT_A_PTY' });
  await native.killSession(pipe.sessionId, { scopeKey });
});

test('a PTY run in the container is killed whole, a full-screen program shows its screen', when(noEngine), async () => {
  const cwd = fs.realpathSync(tempDir());
  const scopeKey = newScope();
  const draw = "printf '\\033[?1049h\\033[2J\\033[HEDITOR: notes\\033[27;1H-- INSERT --'; sleep 411 & sleep 412";
  const bg = await native.exec({ command: draw, cwd, scopeKey, pty: { cols: 80, rows: 27 }, background: true, host: host() });
  await waitFor(() => /-- INSERT --/.test(native.readScreen(bg.sessionId, { scopeKey }).text), { what: 'the screen to be drawn', timeoutMs: 30000 });
  const screen = native.readScreen(bg.sessionId, { scopeKey });
  assert.match(screen.text, /^EDITOR: notes/);
  await waitFor(async () => /sleep 412/.test(await processesIn(scopeKey, cwd)), { what: 'the tree to start', timeoutMs: 20000 });
  await native.killSession(bg.sessionId, { scopeKey });
  await waitFor(async () => (await native.pollSession(bg.sessionId, { scopeKey })).status !== 'running', { what: 'the killed run to end', timeoutMs: 30000 });
  assert.doesNotMatch(await processesIn(scopeKey, cwd), /sleep 41[12]/);
});

test('trackCwd in the container: a cd inside the workspace carries over; the container\'s own directories do not', when(noEngine), async () => {
  const base = fs.realpathSync(tempDir());
  fs.mkdirSync(path.join(base, 'packages', 'x'), { recursive: true });
  const scopeKey = newScope();
  const h = host({ workspace: base });
  const first = await native.exec({ command: 'cd packages/x', cwd: base, scopeKey, trackCwd: true, host: h });
  assert.equal(first.finalCwd, path.join(base, 'packages', 'x'), JSON.stringify(first));
  const second = await native.exec({ command: 'pwd; exit 3', scopeKey, trackCwd: true, host: h });
  assert.equal(second.output, `${path.join(base, 'packages', 'x')}\n`);
  assert.equal(second.exitCode, 3, 'the exit code survives the trap');
  // Over the container's terminal too.
  const pty = await native.exec({ command: 'cd ..; echo moved', scopeKey, pty: true, trackCwd: true, host: h });
  assert.equal(pty.finalCwd, path.join(base, 'packages'));
  // `/` and /tmp are the container's, not this machine's: the tracked directory stays.
  const out = await native.exec({ command: 'cd /tmp', scopeKey, trackCwd: true, host: h });
  assert.equal(out.finalCwd, undefined);
  const third = await native.exec({ command: 'pwd', scopeKey, trackCwd: true, host: h });
  assert.equal(third.output, `${path.join(base, 'packages')}\n`);
  // The report is removed from the container after each run.
  const left = await native.exec({ command: 'ls -a /tmp', cwd: base, scopeKey, host: h });
  assert.doesNotMatch(left.output, /agent-exec-cwd/);
  // A report the run wrote itself (its own EXIT trap replaced ours) still names nothing but the
  // workspace's directories: here a link to a file of the container's.
  const linked = await native.exec({ command: 'trap \'ln -sf /etc/hostname "$AGENT_EXEC_CWD_FILE"\' EXIT; cd /', cwd: base, scopeKey, trackCwd: true, host: h });
  assert.equal(linked.finalCwd, undefined);
});

test('pathPrepend goes before the container\'s own PATH; this machine\'s PATH never goes in', when(noEngine), async () => {
  const cwd = fs.realpathSync(tempDir());
  const scopeKey = newScope();
  const r = await native.exec({ command: 'echo "$PATH"; echo "[${AGENT_EXEC_PREPEND_PATH-unset}]"; mkdir -p /opt/tools; printf "#!/bin/sh\\necho mine\\n" > /opt/tools/mytool; chmod +x /opt/tools/mytool', cwd, scopeKey, host: host({ pathPrepend: ['/opt/tools', '/opt/more'] }) });
  const [pathLine, spent] = r.output.split('\n');
  assert.match(pathLine, /^\/opt\/tools:\/opt\/more:/);
  assert.match(pathLine, /\/bin/, 'the container\'s own PATH follows');
  assert.equal(spent, '[unset]');
  for (const dir of (process.env.PATH || '').split(':').filter((d) => d && !/^\/(usr\/)?(local\/)?s?bin$/.test(d))) {
    assert.ok(!pathLine.split(':').includes(dir), `this machine's ${dir} went into the container's PATH`);
  }
  const found = await native.exec({ command: 'mytool', cwd, scopeKey, host: host({ pathPrepend: ['/opt/tools'] }) });
  assert.equal(found.output, 'mine\n');
  for (const bad of [[''], ['/a:/b'], ['/a\0b'], '/a', [1]]) {
    await assert.rejects(native.exec({ command: 'true', cwd, host: host({ pathPrepend: bad }) }), (e) => e.code === 'ERR_INVALID_OPTION' && /pathPrepend/.test(e.message), JSON.stringify(bad));
  }
});

/** Whether `cmd` runs here (a tool the TLS test needs). */
function have(cmd) {
  return require('node:child_process').spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;
}

/** A CA, a server certificate for localhost and 127.0.0.1, and two client identities: one the CA
 *  signed (the engine's client directory, as DOCKER_CERT_PATH holds it) and one it did not. */
function makeCertificates(dir) {
  const ssl = (...args) => {
    const r = require('node:child_process').spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`openssl ${args.join(' ')}: ${r.stderr}`);
  };
  ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca-key.pem', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=agent-exec test CA');
  fs.writeFileSync(path.join(dir, 'server.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  ssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server-key.pem', '-out', 'server.csr', '-subj', '/CN=localhost');
  ssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca-key.pem', '-CAcreateserial', '-out', 'server.pem', '-days', '2', '-extfile', 'server.ext');
  const client = path.join(dir, 'client');
  const stranger = path.join(dir, 'stranger');
  fs.mkdirSync(client);
  fs.mkdirSync(stranger);
  fs.writeFileSync(path.join(dir, 'client.ext'), 'extendedKeyUsage=clientAuth\n');
  ssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'client/key.pem', '-out', 'client.csr', '-subj', '/CN=client');
  ssl('x509', '-req', '-in', 'client.csr', '-CA', 'ca.pem', '-CAkey', 'ca-key.pem', '-CAcreateserial', '-out', 'client/cert.pem', '-days', '2', '-extfile', 'client.ext');
  fs.copyFileSync(path.join(dir, 'ca.pem'), path.join(client, 'ca.pem'));
  // Self-signed: the engine's side does not trust it.
  ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'stranger/key.pem', '-out', 'stranger/cert.pem', '-days', '2', '-subj', '/CN=stranger');
  fs.copyFileSync(path.join(dir, 'ca.pem'), path.join(stranger, 'ca.pem'));
  return { client, stranger };
}

/** A TLS front of the test engine that asks for a client certificate signed by the CA, as a Docker
 *  daemon with --tlsverify does; each connection relayed to the engine's socket. */
async function tlsFront(dir) {
  const tls = require('node:tls');
  const net = require('node:net');
  const read = (f) => fs.readFileSync(path.join(dir, f));
  const sockets = new Set();
  const server = tls.createServer({ key: read('server-key.pem'), cert: read('server.pem'), ca: read('ca.pem'), requestCert: true, rejectUnauthorized: true }, (client) => {
    const upstream = net.connect(engine.replace(/^unix:\/\//, ''));
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => sockets.delete(s));
    }
    client.pipe(upstream).pipe(client);
  });
  server.on('tlsClientError', () => {});
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: server.address().port,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

const noOpenssl = !have('openssl') && 'no openssl here (it makes the test certificates)';
test('a remote engine over TLS with client certificates (certPath, or DOCKER_TLS_VERIFY and DOCKER_CERT_PATH)', when(noEngine, !engine.startsWith('unix://') && 'the test engine is not a unix socket to put TLS in front of', noOpenssl), async () => {
  const dir = fs.realpathSync(tempDir());
  const { client, stranger } = makeCertificates(dir);
  const front = await tlsFront(dir);
  const { port } = front;
  try {
    const scopeKey = newScope();
    const tls = { container: { image, engine: `tcp://127.0.0.1:${port}`, certPath: client, network: 'none' } };
    const r = await native.exec({ command: 'echo over-tls; exit 3', cwd: dir, scopeKey, host: tls });
    assert.equal(r.output, 'over-tls\n');
    assert.equal(r.exitCode, 3);
    // An identity the CA did not sign is refused by the engine's side; plain HTTP to it gets no answer.
    await assert.rejects(
      native.exec({ command: 'true', cwd: dir, host: { container: { image, engine: `tcp://127.0.0.1:${port}`, certPath: stranger } } }),
      (e) => e.code === 'ERR_CONTAINER_ENGINE',
    );
    await assert.rejects(
      native.exec({ command: 'true', cwd: dir, host: { container: { image, engine: `tcp://localhost:${port}` } } }),
      (e) => e.code === 'ERR_CONTAINER_ENGINE',
    );
    // Docker's CLI convention: DOCKER_TLS_VERIFY with DOCKER_CERT_PATH, for an address without certPath.
    process.env.DOCKER_TLS_VERIFY = '1';
    process.env.DOCKER_CERT_PATH = client;
    try {
      const viaEnv = await native.exec({ command: 'echo env-tls', cwd: dir, scopeKey: newScope(), host: { container: { image, engine: `tcp://localhost:${port}`, network: 'none' } } });
      assert.equal(viaEnv.output, 'env-tls\n');
    } finally {
      delete process.env.DOCKER_TLS_VERIFY;
      delete process.env.DOCKER_CERT_PATH;
    }
    // Certificates that are not all there, and a certPath for a socket: the caller's to fix.
    await assert.rejects(
      native.exec({ command: 'true', cwd: dir, host: { container: { image, engine: `tcp://127.0.0.1:${port}`, certPath: dir } } }),
      (e) => e.code === 'ERR_INVALID_OPTION' && /cert\.pem is missing/.test(e.message),
    );
    await assert.rejects(
      native.exec({ command: 'true', cwd: dir, host: { container: { image, engine, certPath: client } } }),
      (e) => e.code === 'ERR_INVALID_OPTION' && /certPath is for tcp:\/\/ and https:\/\/ engines/.test(e.message),
    );
  } finally {
    await front.close();
  }
});

test('an approval is decided before anything reaches the engine', when(noEngine), async () => {
  const cwd = fs.realpathSync(tempDir());
  const scopeKey = newScope();
  // Ids, not a count: containers of earlier tests may be going away meanwhile.
  const before = new Set((await containersOf(process.pid)).map((c) => c.Id));
  const r = await native.exec({
    command: `touch ${path.join(cwd, 'canary')}`,
    cwd,
    scopeKey,
    host: host(),
    approval: { security: 'allowlist', ask: 'off', approvalsFile: path.join(cwd, 'approvals.json') },
  });
  assert.match(r.reason ?? '', /^exec denied/, JSON.stringify(r));
  assert.equal(fs.existsSync(path.join(cwd, 'canary')), false);
  const made = (await containersOf(process.pid)).filter((c) => !before.has(c.Id));
  assert.deepEqual(made, [], 'a container was made for a denied command');
});

test('bad host options and an unreachable engine are typed errors', async () => {
  const cwd = tempDir();
  const bad = [
    [{ container: {} }, /needs an image .* or an id/],
    [{ container: { image: 'x', id: 'y' } }, /not both/],
    [{ container: { image: 'x', imag: 'y' } }, /host\.container has no setting "imag"/],
    [{ vm: {} }, /The host option has no setting "vm"/],
    ['container', /The host option must be an object/],
    [{ container: { image: 'x', workspace: 'rel' } }, /workspace must be an absolute path/],
    [{ container: { image: 'x', certPath: 'certs' } }, /certPath must be an absolute path/],
    [{ container: { image: 'x', engine: 'ssh://me@far' } }, /ssh:\/\/ engine .* is not built in\. Forward the engine's socket/],
  ];
  for (const [h, message] of bad) {
    await assert.rejects(native.exec({ command: 'true', cwd, host: h }), (e) => e.code === 'ERR_INVALID_OPTION' && message.test(e.message), JSON.stringify(h));
  }
  await assert.rejects(
    native.exec({ command: 'true', cwd, host: { container: { image, engine: `unix://${path.join(cwd, 'no-engine.sock')}` } } }),
    (e) => e.code === 'ERR_CONTAINER_ENGINE' && /could not be reached/.test(e.message) && /podman system service/.test(e.message),
  );
  await assert.rejects(
    native.exec({ command: 'true', cwd, sandbox: true, host: { container: { image, engine: engine || 'unix:///nowhere' } } }),
    (e) => e.code === 'ERR_INVALID_OPTION' && /does not take sandbox/.test(e.message),
  );
});

/** Another host process (a Node of its own) that has started `options`' run and lives until killed. */
async function doomedHost(options) {
  const script = `
    const native = require(${JSON.stringify(path.join(__dirname, '..', 'index.js'))});
    native.exec(${JSON.stringify(options)})
      .then((r) => console.log('started', r.sessionId), (e) => console.log('failed', e.message));
    setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  try {
    await waitFor(() => /started|failed/.test(out), { what: 'the doomed host to start its run', timeoutMs: 60000 });
    assert.match(out, /started/);
  } catch (e) {
    child.kill('SIGKILL');
    throw e;
  }
  return child;
}

test('a SIGKILLed host leaves no container and no run behind', when(noEngine), async () => {
  const cwd = fs.realpathSync(tempDir());
  const child = await doomedHost({ command: 'sleep 600', cwd, background: true, scopeKey: 'doomed', host: { container: { image, engine, network: 'none' } } });
  try {
    assert.equal((await containersOf(child.pid)).length, 1, 'the host made its scope\'s container');
    child.kill('SIGKILL');
    await waitFor(async () => (await containersOf(child.pid)).length === 0, { what: 'the dead host\'s container to be removed', timeoutMs: 60000 });
  } finally {
    child.kill('SIGKILL');
  }
});

test('a SIGKILLed host leaves no run behind in a container it did not make (id); other hosts\' runs there live on', when(noEngine), async () => {
  const cwd = fs.realpathSync(tempDir());
  // The container: this test process's scope container, which lives as long as this process.
  const scopeKey = newScope();
  await native.exec({ command: 'true', cwd, scopeKey, host: host() });
  const [made] = (await containersOf(process.pid)).filter((c) => c.Labels['dev.agent-exec.scope'] === scopeKey);
  const byId = { container: { id: made.Id, engine } };
  // This process's own run there, through the id too: another host's, for the dying one's warden.
  const mine = await native.exec({ command: 'sleep 614', cwd, background: true, host: byId });
  const child = await doomedHost({ command: 'sleep 611 & (sleep 612 &); sleep 613', cwd, background: true, host: byId });
  try {
    await waitFor(async () => /sleep 613/.test(await processesIn(scopeKey, cwd)), { what: 'the doomed run\'s tree', timeoutMs: 20000 });
    assert.match(await processesIn(scopeKey, cwd), /agent-exec-warden/);
    child.kill('SIGKILL');
    await waitFor(async () => !/sleep 61[123]/.test(await processesIn(scopeKey, cwd)), { what: 'the dead host\'s runs to end', timeoutMs: 30000 });
    const left = await processesIn(scopeKey, cwd);
    assert.match(left, /sleep 614/, 'the warden ended another host\'s run');
  } finally {
    child.kill('SIGKILL');
    await native.killSession(mine.sessionId);
  }
});

test('the exec tool with a container configuration: host=sandbox (and auto) run in the container, no approval asked', when(noEngine), async () => {
  const { createExecTool } = require('../js/tools/index.js');
  const cwd = fs.realpathSync(tempDir());
  let asked = 0;
  const tool = createExecTool({
    cwd,
    scopeKey: newScope(),
    container: { image, engine, network: 'none' },
    security: 'allowlist',
    ask: 'always',
    onApproval: async () => {
      asked++;
      return 'deny';
    },
  });
  // The container's pid 1 is the scope container's keeper, not this machine's init.
  const r = await tool.execute('call-1', { command: 'cat /proc/1/cmdline | tr "\\0" " "; echo; touch made-in-container' });
  assert.match(r.content[0].text, /\/bin\/sh -c cat > \/dev\/null; exit 0/, r.content[0].text);
  assert.equal(asked, 0);
  assert.ok(fs.existsSync(path.join(cwd, 'made-in-container')));
  const pty = await tool.execute('call-2', { command: '[ -t 1 ] && echo "on a terminal"', pty: true, host: 'sandbox' });
  assert.match(pty.content[0].text, /on a terminal/);
  assert.doesNotMatch(pty.content[0].text, /Warning/);
  assert.throws(() => createExecTool({ sandbox: true, container: { image } }), (e) => e.code === 'ERR_INVALID_OPTION');
});

test('the exec tool in a container: trackCwd carries cd over, pathPrepend goes before the container\'s PATH', when(noEngine), async () => {
  const { createExecTool } = require('../js/tools/index.js');
  const cwd = fs.realpathSync(tempDir());
  fs.mkdirSync(path.join(cwd, 'sub'));
  const tool = createExecTool({ cwd, scopeKey: newScope(), container: { image, engine, network: 'none' }, trackCwd: true, pathPrepend: ['/opt/agent-bin'] });
  await tool.execute('c1', { command: 'cd sub' });
  const r = await tool.execute('c2', { command: 'pwd; echo "$PATH"' });
  const [dir, pathLine] = r.content[0].text.split('\n');
  assert.equal(dir, path.join(cwd, 'sub'));
  assert.match(pathLine, /^\/opt\/agent-bin:/);
  assert.ok(!pathLine.split(':').some((d) => d.includes('.cargo') || d.includes('node_modules')), pathLine);
});
