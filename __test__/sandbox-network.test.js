'use strict';
// The sandbox's network by domain (issue 34, item 1): a sandboxed command reaches the names it was
// allowed through the sandbox's proxy (HTTP, CONNECT tunnels and SOCKS5 with curl, as the proxy
// variables set up), and nothing else: another name, an IP literal, a loopback port not allowed, a
// direct connection around the proxy and UDP are each refused and recorded. A real HTTP server on
// loopback plays the internet, reached by `*.localhost` names (RFC 6761: no DNS needed).

const test = require('node:test');
const assert = require('node:assert/strict');
const http = require('node:http');
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync, execFile } = require('node:child_process');

const { native, killTracked, tempDir, run, waitFor } = require('./helpers.js');

test.after(killTracked);

const caps = native.sandboxCapabilities();
const noSandbox = !caps.enforceable && `this host cannot sandbox: ${caps.problems.join('; ')}`;
const noCurl = spawnSync('curl', ['--version']).status !== 0 && 'curl is not installed';
const noPython = spawnSync('python3', ['-c', '1']).status !== 0 && 'python3 is not installed';
const when = (...reasons) => ({ skip: reasons.find(Boolean) || false });
const noNetns = !caps.networkNamespace && 'this host cannot make a network namespace for a run';

/**
 * Run `script` in a Node host of its own with `env` (capabilities are probed once per process, so a
 * switch like AGENT_EXEC_NO_MOUNT_NAMESPACE needs a new one), without blocking this one's servers.
 */
function hostScript(script, env) {
  const code = `const native = require(${JSON.stringify(path.join(__dirname, '..', 'index.js'))});\n${script}`;
  return new Promise((resolve) => {
    execFile(process.execPath, ['-e', code], { encoding: 'utf8', timeout: 60000, env: { ...process.env, ...env } }, (error, stdout, stderr) => {
      resolve({ lines: stdout.split('\n').filter(Boolean), error, stderr });
    });
  });
}

/** What a run sees of its network: interfaces, listening TCP sockets (address#inode), and a fetch. */
const NETWORK_VIEW = [
  'import sys, urllib.request',
  "ifs = [l.split(':')[0].strip() for l in open('/proc/self/net/dev').read().splitlines()[2:]]",
  'listen = []',
  "for f in ('/proc/self/net/tcp', '/proc/self/net/tcp6'):",
  '    for l in open(f).read().splitlines()[1:]:',
  '        p = l.split()',
  "        if p[3] == '0A': listen.append(p[1] + '#' + p[9])",
  "print('ifs', ','.join(ifs))",
  "print('listen', ' '.join(listen))",
  "print(urllib.request.urlopen('http://app.localhost:%s/view' % sys.argv[1], timeout=10).read().decode().strip())",
].join('\n');

/** The host's loopback address `127.0.0.1:port` as /proc/net/tcp writes it. */
const procAddress = (port) => `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`;

/** This process's open sockets, by inode. */
const ownSockets = () => fs.readdirSync('/proc/self/fd').map((fd) => {
  try {
    return fs.readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return '';
  }
}).filter((l) => l.startsWith('socket:'));

/** A loopback HTTP server answering with what it saw; closed when the test ends. */
async function origin(t) {
  const seen = [];
  const server = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url} host=${req.headers.host}`);
    res.end(`origin saw ${req.url}\n`);
  });
  await new Promise((res) => server.listen(0, '127.0.0.1', res));
  t.after(() => new Promise((res) => server.close(res)));
  return { port: server.address().port, seen };
}

test('allowed names are reached through the proxy by HTTP, CONNECT and SOCKS5; others are refused and named', when(noSandbox, noCurl), async (t) => {
  const { port, seen } = await origin(t);
  const sandbox = { network: { allow: ['app.localhost', '*.svc.localhost'], allowLocalhost: [port] } };
  const curl = (args) => `curl -s --max-time 10 ${args}; echo " [rc=$?]"`;
  const r = await run({
    command: [
      curl(`http://app.localhost:${port}/plain`),
      curl(`-p http://api.svc.localhost:${port}/tunnel`),
      curl(`-x "$ALL_PROXY" http://app.localhost:${port}/socks`),
      curl(`http://other.localhost:${port}/refused`),
      curl(`http://127.0.0.1:${port}/literal`),
      curl(`http://app.localhost:1/closed-port`),
      curl(`--noproxy '*' http://127.0.0.1:${port}/direct`),
    ].join('; '),
    cwd: tempDir(),
    sandbox,
  });
  const lines = r.output.trim().split('\n');
  assert.match(lines[0], /^origin saw \/plain/, r.output);
  assert.match(r.output, /origin saw \/tunnel/);
  assert.match(r.output, /origin saw \/socks/);
  assert.match(r.output, /agent-exec sandbox: other\.localhost:\d+: not in the allowed domains/);
  assert.match(r.output, /agent-exec sandbox: 127\.0\.0\.1:\d+: not in the allowed domains/);
  assert.match(r.output, /agent-exec sandbox: app\.localhost:1: .*allowLocalhost/);
  // The origin saw only what was allowed, and each request once.
  assert.deepEqual(seen.map((s) => s.split(' ')[1]).sort(), ['/plain', '/socks', '/tunnel']);
  const denials = r.sandbox.denials.map((d) => `${d.operation} ${d.detail} ${d.path}: ${d.rule}`);
  assert.ok(denials.some((d) => d.startsWith(`network GET other.localhost:${port}: not in the allowed domains`)), denials.join('\n'));
  assert.ok(denials.some((d) => d.startsWith('network GET app.localhost:1: app.localhost is this machine (loopback)')), denials.join('\n'));
  assert.ok(denials.some((d) => d.startsWith(`network connect(AF_INET) 127.0.0.1:${port}: a direct connection around the sandbox's proxy`)), denials.join('\n'));
  assert.ok(r.sandbox.mechanisms.some((m) => /network by domain through the sandbox's proxy/.test(m)));
});

test('UDP, listening and raw sockets are refused and recorded; the proxy goes with the run', when(noSandbox, noPython), async () => {
  const py = [
    'import socket',
    'for kind, make in [("udp", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM)), ("listen", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM).bind(("127.0.0.1", 0)))]:',
    '    try:',
    '        make(); print(kind, "allowed")',
    '    except OSError as e:',
    '        print(kind, "refused", e.errno)',
  ].join('\n');
  const r = await run({ command: `python3 - <<'PY'\n${py}\nPY`, cwd: tempDir(), sandbox: { network: { allow: ['example.com'] } } });
  assert.match(r.output, /^udp refused \d+\nlisten refused \d+\n$/, r.output);
  const denials = r.sandbox.denials.map((d) => `${d.operation} ${d.detail}: ${d.rule}`);
  assert.ok(denials.some((d) => d.startsWith('network socket(AF_INET): only TCP connections through the sandbox')), denials.join('\n'));
  assert.ok(denials.some((d) => d.startsWith('bind bind(AF_INET): the network is by domain')), denials.join('\n'));
});

test('the proxy listens inside the run\'s own network namespace: its loopback holds the proxy and nothing else, and the socket goes with the run', when(noSandbox, noPython, noNetns), async (t) => {
  const { port, seen } = await origin(t);
  const dir = tempDir();
  fs.writeFileSync(path.join(dir, 'view.py'), NETWORK_VIEW);
  const r = await run({ command: `python3 view.py ${port}`, cwd: dir, sandbox: { writableRoots: [dir], network: { allow: ['app.localhost'], allowLocalhost: [port] } } });
  const lines = r.output.trim().split('\n');
  assert.equal(lines[0], 'ifs lo', r.output);
  // One listening socket in the run's world: the proxy's. The host's (this test's origin among
  // them) are not there to reach, whatever a filter might let through.
  const listening = lines[1].split(' ').slice(1);
  assert.equal(listening.length, 1, r.output);
  const [address, inode] = listening[0].split('#');
  assert.equal(address, procAddress(3128), r.output);
  assert.equal(lines[2], 'origin saw /view', r.output);
  assert.deepEqual(seen.map((s) => s.split(' ')[1]), ['/view']);
  assert.ok(r.sandbox.mechanisms.some((m) => /proxy at 127\.0\.0\.1:3128 inside the run's own network namespace/.test(m)), r.sandbox.mechanisms.join('\n'));
  // The runtime served that very socket; once the run is over it holds it no more.
  await waitFor(() => !ownSockets().includes(`socket:[${inode}]`), { what: `the proxy's socket ${inode} to be closed after the run`, timeoutMs: 10000 });
  // The same world on a terminal, and where the run is forked (no PID namespace: the socket is
  // handed over, not made in a shared descriptor table).
  const options = (pty) => JSON.stringify({ command: `python3 view.py ${port}`, cwd: dir, pty, sandbox: { writableRoots: [dir], network: { allow: ['app.localhost'], allowLocalhost: [port] } } });
  const onTerminal = await run(JSON.parse(options(true)));
  const forked = await hostScript(`(async () => {
    for (const o of [${options(false)}, ${options(true)}]) console.log(JSON.stringify((await native.exec(o)).output));
  })()`, { AGENT_EXEC_NO_PID_NAMESPACE: '1' });
  const views = [onTerminal.output, ...forked.lines.map((l) => JSON.parse(l))];
  assert.equal(views.length, 3, forked.stderr);
  for (const view of views) {
    const [ifs, listen, fetched] = view.replace(/\r/g, '').trim().split('\n');
    assert.equal(ifs, 'ifs lo', view);
    assert.match(listen, new RegExp(`^listen ${procAddress(3128)}#\\d+$`), view);
    assert.equal(fetched, 'origin saw /view', view);
  }
  assert.equal(seen.length, 4, seen.join('\n'));
});

test('without a namespace the proxy listens on the host\'s loopback for the run only', when(noSandbox, noPython), async (t) => {
  const { port, seen } = await origin(t);
  const dir = tempDir();
  fs.writeFileSync(path.join(dir, 'view.py'), NETWORK_VIEW);
  const host = await hostScript(`(async () => {
    const r = await native.exec({ command: 'python3 view.py ${port}', cwd: ${JSON.stringify(dir)}, sandbox: { writableRoots: [${JSON.stringify(dir)}], network: { allow: ['app.localhost'], allowLocalhost: [${port}] } } });
    console.log(JSON.stringify({ output: r.output, mechanisms: r.sandbox.mechanisms }));
  })()`, { AGENT_EXEC_NO_MOUNT_NAMESPACE: '1' });
  const { output, mechanisms } = JSON.parse(host.lines[0] ?? 'null') ?? assert.fail(host.stderr);
  assert.match(output, /origin saw \/view/, output);
  assert.deepEqual(seen.map((s) => s.split(' ')[1]), ['/view']);
  const address = /proxy at (127\.0\.0\.1:\d+) on the host's loopback/.exec(mechanisms.join(' '))?.[1];
  assert.ok(address, mechanisms.join('\n'));
  // It listened on the host's loopback for the run only: gone once the run ended.
  const [h, p] = address.split(':');
  const closed = await new Promise((res) => {
    const s = require('node:net').connect(Number(p), h);
    s.on('connect', () => (s.destroy(), res(false)));
    s.on('error', () => res(true));
  });
  assert.equal(closed, true, `the proxy at ${address} outlived its run`);
});

test('bad network options are typed errors', async () => {
  const cases = [
    [{ network: { allow: 'x.com' } }, /sandbox\.network\.allow must be an array of host patterns/],
    [{ network: { allowLocalhost: [0] } }, /allowLocalhost must be an array of port numbers/],
    [{ network: { alow: [] } }, /sandbox\.network has no setting "alow"/],
    [{ network: 'some' }, /sandbox\.network must be true, false, or \{ allow/],
  ];
  for (const [sandbox, message] of cases) {
    await assert.rejects(native.exec({ command: 'true', sandbox }), (e) => e.code === 'ERR_INVALID_OPTION' && message.test(e.message), JSON.stringify(sandbox));
  }
  if (caps.enforceable) {
    await assert.rejects(native.exec({ command: 'true', sandbox: { network: { allow: ['*'] } } }), { code: 'ERR_INVALID_OPTION', message: /patterns are host names/ });
  }
});

test('a name no pattern decides is put to onRequest, once per host and port; a refusal or no answer refuses', when(noSandbox, noCurl), async (t) => {
  const { port, seen } = await origin(t);
  const asked = [];
  const network = {
    allow: [],
    allowLocalhost: [port],
    requestTimeoutMs: 2000,
    onRequest: async ({ host, port: p }) => {
      asked.push(`${host}:${p}`);
      if (host === 'yes.localhost') return 'allow-once';
      if (host === 'slow.localhost') return new Promise(() => {});
      return 'deny';
    },
  };
  const curl = (url) => `curl -s --max-time 10 ${url}; echo`;
  const r = await run({
    command: [curl(`http://yes.localhost:${port}/a`), curl(`http://yes.localhost:${port}/b`), curl(`http://no.localhost:${port}/c`), curl(`http://slow.localhost:${port}/d`)].join('; '),
    cwd: tempDir(),
    sandbox: { network },
    timeoutMs: 60000,
  });
  assert.match(r.output, /origin saw \/a\n+origin saw \/b/);
  assert.match(r.output, /no\.localhost:\d+: not in the allowed domains, and the host refused it/);
  assert.match(r.output, /slow\.localhost:\d+: not in the allowed domains, and the host refused it/);
  assert.deepEqual(asked, [`yes.localhost:${port}`, `no.localhost:${port}`, `slow.localhost:${port}`]);
  assert.deepEqual(seen.map((s) => s.split(' ')[1]), ['/a', '/b']);
});

test('git clones over HTTP through the proxy from an allowed name, and not from another', when(noSandbox), async (t) => {
  const fs = require('node:fs');
  const path = require('node:path');
  const git = (cwd, ...args) => spawnSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@e', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@e' } });
  if (git('/', '--version').status !== 0) return t.skip('git is not installed');
  // A repository served by git's dumb HTTP protocol: plain files, as a static server gives them.
  const root = fs.realpathSync(tempDir());
  const work = path.join(root, 'work');
  fs.mkdirSync(work);
  git(work, 'init', '-q');
  fs.writeFileSync(path.join(work, 'hello.txt'), 'over the proxy\n');
  git(work, 'add', '.');
  git(work, 'commit', '-qm', 'one');
  git(root, 'clone', '-q', '--bare', work, 'served.git');
  git(path.join(root, 'served.git'), 'update-server-info');
  const served = path.join(root, 'served.git');
  const server = http.createServer((req, res) => {
    const file = path.join(served, decodeURIComponent(req.url.replace(/^\/served\.git/, '').split('?')[0]));
    if (!file.startsWith(served) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) {
      res.statusCode = 404;
      return res.end();
    }
    fs.createReadStream(file).pipe(res);
  });
  await new Promise((res) => server.listen(0, '127.0.0.1', res));
  t.after(() => new Promise((res) => server.close(res)));
  const port = server.address().port;
  const dest = fs.realpathSync(tempDir());
  const r = await run({
    command: `git clone -q http://repo.localhost:${port}/served.git ok && cat ok/hello.txt; git clone -q http://other.localhost:${port}/served.git no 2>&1 | tail -1`,
    cwd: dest,
    env: { GIT_CONFIG_GLOBAL: '/dev/null' },
    sandbox: { network: { allow: ['repo.localhost'], allowLocalhost: [port] } },
    timeoutMs: 60000,
  });
  assert.match(r.output, /^over the proxy\n/, r.output);
  assert.match(r.output, /403/);
  assert.equal(fs.existsSync(path.join(dest, 'no', 'hello.txt')), false);
  assert.ok(r.sandbox.denials.some((d) => d.path === `other.localhost:${port}`), JSON.stringify(r.sandbox.denials));
});

const noNpm = spawnSync('npm', ['--version']).status !== 0 && 'npm is not installed';

test('npm installs from a registry through the proxy, and reaches nothing else', when(noSandbox, noNpm), async (t) => {
  const fs = require('node:fs');
  const path = require('node:path');
  const crypto = require('node:crypto');
  // A package tarball as npm packs one (a `package/` directory), served by a local registry.
  const src = tempDir();
  fs.mkdirSync(path.join(src, 'package'));
  fs.writeFileSync(path.join(src, 'package', 'package.json'), JSON.stringify({ name: 'tiny-dep', version: '1.0.0', main: 'index.js' }));
  fs.writeFileSync(path.join(src, 'package', 'index.js'), "module.exports = 'tiny-dep works';\n");
  const tgz = path.join(src, 'tiny-dep-1.0.0.tgz');
  assert.equal(spawnSync('tar', ['czf', tgz, '-C', src, 'package']).status, 0);
  const tarball = fs.readFileSync(tgz);
  const integrity = `sha512-${crypto.createHash('sha512').update(tarball).digest('base64')}`;
  const seen = [];
  const server = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    const port = server.address().port;
    if (req.url === '/tiny-dep') {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({
        name: 'tiny-dep',
        'dist-tags': { latest: '1.0.0' },
        versions: { '1.0.0': { name: 'tiny-dep', version: '1.0.0', dist: { tarball: `http://registry.localhost:${port}/tiny-dep/-/tiny-dep-1.0.0.tgz`, integrity } } },
      }));
    } else if (req.url === '/tiny-dep/-/tiny-dep-1.0.0.tgz') {
      res.end(tarball);
    } else {
      res.statusCode = 404;
      res.end('{}');
    }
  });
  await new Promise((res) => server.listen(0, '127.0.0.1', res));
  t.after(() => new Promise((res) => server.close(res)));
  const port = server.address().port;
  const project = tempDir();
  fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true }));
  const r = await run({
    command: `npm install tiny-dep --registry http://registry.localhost:${port}/ --cache ./.npm-cache --logs-dir ./.npm-logs --no-audit --no-fund --no-update-notifier && node -e "console.log(require('tiny-dep'))"`,
    cwd: project,
    timeoutMs: 120000,
    sandbox: { network: { allow: ['registry.localhost'], allowLocalhost: [port] } },
  });
  assert.match(r.output, /tiny-dep works/, r.output);
  assert.equal(r.exitCode, 0, r.output);
  assert.ok(fs.existsSync(path.join(project, 'node_modules', 'tiny-dep', 'index.js')));
  assert.ok(seen.includes('GET /tiny-dep') && seen.includes('GET /tiny-dep/-/tiny-dep-1.0.0.tgz'), seen.join('\n'));
  // npm went nowhere else: no refusal of another name, no direct connection. (Node asks a netlink
  // socket for the host's interfaces, which the sandbox refuses and records: npm copes.)
  const network = r.sandbox.denials.filter((d) => d.operation === 'network' && d.detail !== 'socket(AF_NETLINK)');
  assert.deepEqual(network, [], JSON.stringify(network));
});

const noOpenssl = spawnSync('openssl', ['version']).status !== 0 && 'openssl is not installed';

test('HTTPS goes through the proxy as a tunnel: the server\'s own certificate reaches the client', when(noSandbox, noCurl, noOpenssl), async (t) => {
  const fs = require('node:fs');
  const path = require('node:path');
  const https = require('node:https');
  const dir = tempDir();
  const [key, cert] = [path.join(dir, 'key.pem'), path.join(dir, 'cert.pem')];
  const made = spawnSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=secure.localhost', '-addext', 'subjectAltName=DNS:secure.localhost,DNS:evil.localhost']);
  assert.equal(made.status, 0, String(made.stderr));
  const seen = [];
  const server = https.createServer({ key: fs.readFileSync(key), cert: fs.readFileSync(cert) }, (req, res) => {
    seen.push(`${req.headers.host} ${req.url}`);
    res.end('secret over tls\n');
  });
  await new Promise((res) => server.listen(0, '127.0.0.1', res));
  t.after(() => new Promise((res) => server.close(res)));
  const port = server.address().port;
  const r = await run({
    // The client checks the certificate against the server's own: a proxy that looked inside (its own
    // certificate) would fail the check.
    command: `curl -sS --max-time 10 --cacert ${cert} https://secure.localhost:${port}/inside; echo "[rc=$?]"; curl -sS --max-time 10 --cacert ${cert} https://evil.localhost:${port}/refused; echo "[rc=$?]"`,
    cwd: dir,
    sandbox: { network: { allow: ['secure.localhost'], allowLocalhost: [port] } },
  });
  assert.match(r.output, /^secret over tls\n\[rc=0\]/, r.output);
  assert.doesNotMatch(r.output, /\[rc=0\]\n*$/, r.output);
  assert.deepEqual(seen, [`secure.localhost:${port} /inside`]);
  const denials = r.sandbox.denials.map((d) => `${d.operation} ${d.detail} ${d.path}`);
  assert.ok(denials.some((d) => d === `network CONNECT evil.localhost:${port}`), denials.join('\n'));
});
