'use strict';
// Benchmarks against the real alternatives, in one run: plain child_process, an exec built on
// @lydell/node-pty as OpenClaw has it, and a raw Rust spawn loop as the floor. Prints every figure with
// its ratio and writes bench/results/latest.json and bench/results/chart.svg.
//
//   npm run bench            full run (a few minutes on 2 cores)
//   npm run bench -- --quick under a minute
//   npm run bench -- --only sandbox   one group (exec, tracking, sandbox, throughput, flood, sessions); prints only
//   npm run bench -- --only pause     runs each after a pause, as an agent makes them (part of sandbox)

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn, execFileSync } = require('node:child_process');

const api = require('../js/index.js');
const { renderChart } = require('./chart.js');

const quick = process.argv.includes('--quick');
const onlyAt = process.argv.indexOf('--only');
const only = onlyAt > 0 ? process.argv[onlyAt + 1] : null;
const shell = fs.existsSync('/bin/bash') ? '/bin/bash' : '/bin/sh';
const root = path.join(__dirname, '..');
const results = { date: new Date().toISOString(), quick, machine: machine(), figures: [] };

function machine() {
  const cpus = os.cpus();
  return `${cpus.length} x ${cpus[0]?.model?.trim() ?? 'cpu'}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ${os.type()} ${os.release()}, Node ${process.version}`;
}

function stats(times) {
  const s = times.slice().sort((a, b) => a - b);
  const pick = (q) => s[Math.round((s.length - 1) * q)];
  return { median: pick(0.5), p99: pick(0.99) };
}

function record(name, unit, ours, baselines, goal) {
  const fig = { name, unit, ours, baselines, goal };
  results.figures.push(fig);
  const parts = Object.entries(baselines).map(([k, v]) => `${k} ${fmt(v)} (ratio ${(ours / v).toFixed(2)})`);
  console.log(`${name}: agent-exec ${fmt(ours)} ${unit}${parts.length ? `; ${parts.join('; ')}` : ''}${goal ? `  [goal: ${goal}]` : ''}`);
}

function fmt(v) {
  return v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(3);
}

async function timeMany(n, fn) {
  const times = [];
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    await fn();
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return stats(times);
}

/** `n` rounds of every function in turn; the stats of each. */
async function timeInterleaved(n, fns) {
  const times = fns.map(() => []);
  for (let i = 0; i < n; i++) {
    for (let f = 0; f < fns.length; f++) {
      const t = process.hrtime.bigint();
      await fns[f]();
      times[f].push(Number(process.hrtime.bigint() - t) / 1e6);
    }
  }
  return times.map(stats);
}

function cpSpawn(command, collect = true) {
  return new Promise((resolve, reject) => {
    const child = spawn(shell, ['-c', command], { stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks = [];
    let size = 0;
    const onData = (d) => {
      size += d.length;
      if (collect) chunks.push(d);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, size, output: collect ? Buffer.concat(chunks).toString('utf8') : '' }));
  });
}

function ptySpawn(command) {
  const pty = require('@lydell/node-pty');
  return new Promise((resolve) => {
    const p = pty.spawn(shell, ['-c', command], { name: 'xterm-256color', cols: 120, rows: 30, cwd: process.cwd(), env: process.env });
    let size = 0;
    const chunks = [];
    p.onData((d) => {
      size += d.length;
      chunks.push(d);
    });
    p.onExit(({ exitCode }) => resolve({ code: exitCode, size, output: chunks.join('') }));
  });
}

function rawRustFloor(runs) {
  execFileSync('cargo', ['build', '--release', '--quiet', '--example', 'raw_spawn'], { cwd: root, stdio: 'inherit' });
  // The same shell as every other contender, so the floor measures spawning, not shell start-up.
  const out = execFileSync(path.join(root, 'target', 'release', 'examples', 'raw_spawn'), [String(runs), shell], { encoding: 'utf8' });
  return JSON.parse(out);
}

async function benchExecTrue() {
  const runs = quick ? 100 : 500;
  const tool = api.createExecTool({});
  await timeMany(10, () => tool.execute('warm', { command: 'true' }));
  const ours = await timeMany(runs, () => tool.execute('b', { command: 'true' }));
  const native = await timeMany(runs, () => api.exec({ command: 'true' }));
  const cp = await timeMany(runs, () => cpSpawn('true'));
  const pty = await timeMany(Math.min(runs, 200), () => ptySpawn('true'));
  const raw = rawRustFloor(runs);
  record('exec true via tool adapter, median', 'ms', ours.median, { child_process: cp.median, 'node-pty': pty.median, 'raw Rust': raw.medianMs }, '<= child_process, <= 1.5x raw Rust');
  record('exec true via tool adapter, p99', 'ms', ours.p99, { child_process: cp.p99, 'node-pty': pty.p99, 'raw Rust': raw.p99Ms });
  record('exec true via native exec, median', 'ms', native.median, { child_process: cp.median, 'raw Rust': raw.medianMs });
}

/** What starting every run in its own tracking cgroup costs: the same `exec` of `true` in a Node
 *  process that tracks by cgroup and in one told to track by marker only (tracking is probed once per
 *  process), three interleaved rounds each, medians of medians. */
async function benchTracking() {
  const runs = quick ? 100 : 400;
  const script = `
    const api = require(${JSON.stringify(path.join(root, 'js', 'index.js'))});
    (async () => {
      for (let i = 0; i < 10; i++) await api.exec({ command: 'true' });
      const times = [];
      for (let i = 0; i < ${runs}; i++) {
        const t = process.hrtime.bigint();
        await api.exec({ command: 'true' });
        times.push(Number(process.hrtime.bigint() - t) / 1e6);
      }
      times.sort((a, b) => a - b);
      console.log(JSON.stringify({ tracking: api.processTracking(), median: times[times.length >> 1] }));
    })();`;
  const measure = (env) => JSON.parse(execFileSync(process.execPath, ['-e', script], { env: { ...process.env, ...env }, encoding: 'utf8' }));
  const cgroup = [];
  const marker = [];
  let how = null;
  for (let round = 0; round < 3; round++) {
    const c = measure({});
    how = c.tracking;
    cgroup.push(c.median);
    marker.push(measure({ AGENT_EXEC_NO_CGROUP_TRACKING: '1' }).median);
  }
  if (how.mechanism !== 'cgroup') {
    console.log(`(tracking cgroups unavailable here: ${how.reason})`);
    return;
  }
  const mid = (xs) => xs.slice().sort((a, b) => a - b)[1];
  record(`exec true, born in a tracking cgroup (v${how.cgroupVersion}, ${how.pipeSpawn ?? 'fork'}), median`, 'ms', mid(cgroup), { 'marker only': mid(marker) }, 'cost per run measured');
}

/** Runs as an agent makes them: each after a pause (the model thinking), not back to back. A move into a
 *  cgroup after the spawn waits for an RCU grace period unless another move happened moments before,
 *  so back-to-back loops never see what every real command can pay; these rows do. */
async function benchAfterAPause(cwd) {
  const runs = quick ? 10 : 40;
  const pauseMs = 100;
  const pause = () => new Promise((r) => setTimeout(r, pauseMs));
  const paused = (opts) => async () => {
    await pause();
    const t = process.hrtime.bigint();
    await api.exec({ command: 'true', cwd, ...opts });
    return Number(process.hrtime.bigint() - t) / 1e6;
  };
  const kinds = { plain: {}, pty: { pty: true }, sandboxed: { sandbox: true }, 'sandboxed pty': { sandbox: true, pty: true } };
  const times = Object.fromEntries(Object.keys(kinds).map((k) => [k, []]));
  for (let i = 0; i < runs; i++) {
    for (const [k, opts] of Object.entries(kinds)) times[k].push(await paused(opts)());
  }
  const med = (k) => stats(times[k]).median;
  const plain = { 'agent-exec unsandboxed, after the same pause': med('plain') };
  record(`exec true on a PTY, each after a ${pauseMs} ms pause, median`, 'ms', med('pty'), plain);
  record(`sandboxed exec true, each after a ${pauseMs} ms pause, median`, 'ms', med('sandboxed'), plain);
  record(`sandboxed exec true on a PTY, each after a ${pauseMs} ms pause, median`, 'ms', med('sandboxed pty'), plain);
}

/** The sandbox's cost on a run of `true`: agent-exec sandboxed against agent-exec plain, and against
 *  bubblewrap (what Codex and Claude Code's sandbox-runtime use on Linux) when it is installed. */
async function benchSandbox() {
  const runs = quick ? 50 : 300;
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-exec-bench-sbx-'));
  const sandboxed = () => api.exec({ command: 'true', cwd, sandbox: true });
  const limitedRun = () => api.exec({ command: 'true', cwd, sandbox: { limits: { memoryBytes: 256 << 20, processes: 256 } } });
  const plainRun = () => api.exec({ command: 'true', cwd });
  await timeMany(5, sandboxed);
  // Interleaved, so a busy moment of the machine weighs on each the same.
  const [ours, limited, plain] = await timeInterleaved(runs, [sandboxed, limitedRun, plainRun]);
  const baselines = { 'agent-exec unsandboxed': plain.median };
  let bwrap = null;
  try {
    execFileSync('bwrap', ['--version'], { stdio: 'ignore' });
    const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--bind', cwd, cwd, '--unshare-net', '--die-with-parent', shell, '-c', 'true'];
    bwrap = await timeMany(runs, () => new Promise((resolve, reject) => {
      const c = spawn('bwrap', args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
      c.on('error', reject);
      c.on('close', resolve);
    }));
    baselines['bubblewrap via child_process'] = bwrap.median;
  } catch {
    console.log('(bubblewrap not installed: apt-get install bubblewrap to compare)');
  }
  record('sandboxed exec true, median', 'ms', ours.median, baselines, 'overhead measured, no goal');
  record('sandboxed exec true with memory and process limits (cgroup), median', 'ms', limited.median, { 'agent-exec unsandboxed': plain.median });
  await benchAfterAPause(cwd);
  fs.rmSync(cwd, { recursive: true, force: true });
  // The confinement of a "yes" on analysis alone: a typical read-only command (`git status` in a small
  // repository) allowed by the read-only class (confined in a read-only sandbox) against the same
  // command allowed by an allow rule (the same gate, run as configured) and against no gate at all.
  const repo = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-exec-bench-ro-'));
  execFileSync('git', ['init', '-q'], { cwd: repo });
  for (let i = 0; i < 20; i++) fs.writeFileSync(path.join(repo, `f${i}.txt`), `${i}\n`);
  execFileSync('git', ['add', '-A'], { cwd: repo });
  execFileSync('git', ['-c', 'user.name=b', '-c', 'user.email=b@b', 'commit', '-qm', 'x'], { cwd: repo });
  const deny = async () => 'deny';
  const confined = () => api.exec({ command: 'git status --short', cwd: repo, approval: { rules: {}, allowReadOnly: true, onApproval: deny } });
  const byRule = () => api.exec({ command: 'git status --short', cwd: repo, approval: { rules: { allow: ['Bash(git status:*)'] }, onApproval: deny } });
  const ungated = () => api.exec({ command: 'git status --short', cwd: repo });
  const probe = await confined();
  if (probe.approval?.confinement !== 'read-only-sandbox') console.log(`(the read-only run was not confined here: ${probe.approval?.confinement} ${probe.approval?.confinementNote ?? ''})`);
  await timeMany(5, confined);
  const [c, r, u] = await timeInterleaved(runs, [confined, byRule, ungated]);
  record('read-only `git status` allowed unasked, confined in a read-only sandbox, median', 'ms', c.median, {
    'the same allowed by a rule (unconfined)': r.median,
    'agent-exec without a gate': u.median,
  });
  fs.rmSync(repo, { recursive: true, force: true });
  // Every open for writing is a round trip to the supervisor: the cost per created file, on tmpfs so
  // the disk does not hide it.
  const files = quick ? 1000 : 5000;
  const base = fs.existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir();
  const loop = `for i in $(seq ${files}); do : > f$i; done`;
  const creates = async (sandbox) => {
    const dir = fs.mkdtempSync(path.join(base, 'agent-exec-bench-w-'));
    const t = process.hrtime.bigint();
    await api.exec({ command: loop, cwd: dir, sandbox });
    const ms = Number(process.hrtime.bigint() - t) / 1e6;
    fs.rmSync(dir, { recursive: true, force: true });
    return ms;
  };
  // The same loop under bubblewrap (what srt runs on Linux), where it is installed: the kernel decides
  // every open there, with nothing recorded.
  const bwrapCreates = async () => {
    const dir = fs.mkdtempSync(path.join(base, 'agent-exec-bench-w-'));
    const t = process.hrtime.bigint();
    await new Promise((resolve, reject) => {
      const c = spawn('bwrap', ['--ro-bind', '/', '/', '--dev', '/dev', '--bind', dir, dir, '--unshare-net', '--die-with-parent', shell, '-c', loop], { cwd: dir, stdio: 'ignore' });
      c.on('error', reject);
      c.on('close', resolve);
    });
    const ms = Number(process.hrtime.bigint() - t) / 1e6;
    fs.rmSync(dir, { recursive: true, force: true });
    return ms;
  };
  const med = async (run) => {
    const times = [];
    for (let i = 0; i < 5; i++) times.push(await run());
    return stats(times).median;
  };
  const plainCreates = await med(() => creates(undefined));
  const sandboxedCreates = await med(() => creates(true));
  const createBaselines = { 'agent-exec unsandboxed': plainCreates };
  if (bwrap) createBaselines['bubblewrap via child_process'] = await med(bwrapCreates);
  record(`${files} file creations in a shell loop, sandboxed, median of 5`, 'ms', sandboxedCreates, createBaselines);
  // One round trip, as the caller sees it: a file creation timed call by call inside one process (the
  // shell loop above also pays fork and exec), p50 of 2000 calls, sandboxed against not.
  const python = ['/usr/bin/python3', '/usr/local/bin/python3'].find((p) => fs.existsSync(p));
  if (python) {
    const perCall = async (sandbox) => {
      const dir = fs.mkdtempSync(path.join(base, 'agent-exec-bench-w-'));
      const code = 'import os,sys,time\nd=sys.argv[1]\nl=[]\nfor i in range(2000):\n t=time.perf_counter_ns()\n os.close(os.open(f"{d}/f{i}",os.O_WRONLY|os.O_CREAT,0o644))\n l.append(time.perf_counter_ns()-t)\nl.sort()\nprint(l[len(l)//2])';
      fs.writeFileSync(path.join(dir, 'p.py'), code);
      const r = await api.exec({ command: `${python} p.py ${dir}`, cwd: dir, sandbox });
      fs.rmSync(dir, { recursive: true, force: true });
      return Number(r.output.trim()) / 1000;
    };
    const [sb, plain] = [[], []];
    for (let i = 0; i < 5; i++) {
      plain.push(await perCall(undefined));
      sb.push(await perCall(true));
    }
    record('one file creation (open O_CREAT), sandboxed, call by call, p50 of 2000, median of 5 runs', 'us', stats(sb).median, { 'agent-exec unsandboxed': stats(plain).median });
  }
  await require('./sandbox-workloads.js').benchSandboxWorkloads({ api, record, stats, quick });
  await benchProxy();
}

/**
 * The network by domain: a download through the sandbox's proxy against the same download straight
 * from an unsandboxed run (curl, a loopback server playing the origin), and the time to a response's
 * first byte, which carries the proxy's connect and name check.
 */
async function benchProxy() {
  const curlOk = require('node:child_process').spawnSync('curl', ['--version']).status === 0;
  if (!curlOk) {
    console.log('(curl not installed: no proxy figures)');
    return;
  }
  const mib = quick ? 20 : 100;
  const chunk = Buffer.alloc(1 << 20, 'x');
  const server = require('node:http').createServer((req, res) => {
    if (req.url === '/big') {
      res.setHeader('content-length', String(mib << 20));
      let left = mib;
      const more = () => {
        while (left > 0) {
          left--;
          if (!res.write(chunk)) return res.once('drain', more);
        }
        res.end();
      };
      more();
    } else res.end('ok');
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const port = server.address().port;
  const sandbox = { network: { allow: ['origin.localhost'], allowLocalhost: [port] } };
  const timed = async (command, sb) => {
    const r = await api.exec({ command, sandbox: sb, cwd: os.tmpdir() });
    return r.output.trim().split('\n').map(Number);
  };
  const down = async (sb) => (await timed(`curl -s -o /dev/null -w '%{time_total}\\n' ${sb ? `http://origin.localhost:${port}/big` : `--noproxy '*' http://127.0.0.1:${port}/big`}`, sb))[0];
  const firstByte = async (sb) => {
    const url = sb ? `http://origin.localhost:${port}/small` : `--noproxy '*' http://127.0.0.1:${port}/small`;
    const one = `curl -s -o /dev/null -w '%{time_starttransfer}\\n' ${url}`;
    return stats(await timed(Array(20).fill(one).join('; '), sb)).median * 1000;
  };
  const [viaProxy, direct, fbProxy, fbDirect] = [[], [], [], []];
  for (let i = 0; i < (quick ? 2 : 5); i++) {
    direct.push(await down(undefined));
    viaProxy.push(await down(sandbox));
    fbDirect.push(await firstByte(undefined));
    fbProxy.push(await firstByte(sandbox));
  }
  const mbps = (seconds) => mib / seconds;
  record(`${mib} MiB download through the sandbox's proxy, MiB/s (higher is better)`, 'MiB/s', mbps(stats(viaProxy).median), { 'direct, unsandboxed': mbps(stats(direct).median) });
  record('time to first byte of a small response through the proxy, median of 20 requests', 'ms', stats(fbProxy).median, { 'direct, unsandboxed': stats(fbDirect).median });
  await new Promise((r) => server.close(r));
}

function bigFile(mib) {
  const file = path.join(os.tmpdir(), `agent-exec-bench-${mib}.txt`);
  if (!fs.existsSync(file) || fs.statSync(file).size !== mib * 1048576) {
    const line = 'agent-exec benchmark line with some ordinary ASCII text in it, 0123456789 abcdefghij\n';
    const block = line.repeat(Math.ceil(1048576 / line.length)).slice(0, 1048576);
    const fd = fs.openSync(file, 'w');
    for (let i = 0; i < mib; i++) fs.writeSync(fd, block);
    fs.closeSync(fd);
  }
  return file;
}

async function throughput(fn, bytes) {
  const t = process.hrtime.bigint();
  await fn();
  const s = Number(process.hrtime.bigint() - t) / 1e9;
  return bytes / 1048576 / s;
}

/** The kernel's ceiling for one PTY reader: a blocking Rust read loop (examples/raw_pty_cat.rs). */
function rawPtyCat(file) {
  const out = execFileSync(path.join(root, 'target', 'release', 'examples', 'raw_pty_cat'), [file, shell], { encoding: 'utf8' });
  return JSON.parse(out).mibPerSec;
}

/** Median of `rounds` interleaved runs per contender: single runs vary by 20-40% on a shared 2-core box. */
async function interleaved(rounds, contenders) {
  const got = Object.fromEntries(Object.keys(contenders).map((k) => [k, []]));
  for (let i = 0; i < rounds; i++) {
    for (const [k, fn] of Object.entries(contenders)) got[k].push(await fn());
  }
  return Object.fromEntries(Object.entries(got).map(([k, v]) => [k, stats(v).median]));
}

async function benchThroughput() {
  const mib = quick ? 32 : 100;
  const rounds = quick ? 1 : 3;
  const file = bigFile(mib);
  const bytes = fs.statSync(file).size;
  const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-exec-bench-logs-'));
  execFileSync('cargo', ['build', '--release', '--quiet', '--example', 'raw_pty_cat'], { cwd: root, stdio: 'inherit' });
  const pipes = await interleaved(rounds, {
    ours: () => throughput(() => api.exec({ command: `cat ${file}`, logDir }), bytes),
    child_process: () => throughput(() => cpSpawn(`cat ${file}`), bytes),
  });
  record(`pipe throughput, cat of ${mib} MiB`, 'MiB/s', pipes.ours, { child_process: pipes.child_process }, '>= child_process');
  const ptys = await interleaved(rounds, {
    ours: () => throughput(() => api.exec({ command: `cat ${file}`, pty: true, logDir }), bytes),
    'node-pty': () => throughput(() => ptySpawn(`cat ${file}`), bytes),
    'raw Rust read loop (kernel ceiling)': () => rawPtyCat(file),
  });
  const { ours, ...others } = ptys;
  record(`PTY throughput, cat of ${mib} MiB`, 'MiB/s', ours, others, '>= 2x node-pty');
  fs.rmSync(logDir, { recursive: true, force: true });
}

function flood(variant, seconds) {
  const out = execFileSync(process.execPath, [path.join(__dirname, 'flood.js'), variant, String(seconds)], { encoding: 'utf8' });
  return JSON.parse(out);
}

async function benchFlood() {
  const seconds = quick ? 3 : 10;
  const ours = flood('agent-exec', seconds);
  const cp = flood('child_process', seconds);
  record(`event-loop delay p99, 16 sessions flooding for ${seconds} s`, 'ms', ours.p99, { child_process: cp.p99 }, '< 5 ms');
  record(`memory growth, 16 x yes for ${seconds} s`, 'MiB', ours.growthMiB, { child_process: cp.growthMiB }, '< 64 MiB');
}

/** The soft limit on open files of this process (`ulimit -n`), which caps how many sessions can live. */
function openFileLimit() {
  const m = /^Max open files\s+(\d+|unlimited)/m.exec(fs.readFileSync('/proc/self/limits', 'utf8'));
  return m && m[1] !== 'unlimited' ? Number(m[1]) : Infinity;
}

/** Live sessions at scale: start, list, poll and remove-all, against child_process with the same children. */
async function benchSessions() {
  const fds = () => fs.readdirSync('/proc/self/fd').length;
  const threads = () => Number(/Threads:\s+(\d+)/.exec(fs.readFileSync('/proc/self/status', 'utf8'))[1]);
  const rss = () => process.memoryUsage().rss;
  // 6,000 is where the scale issue set its goals (remove-all under 3 s); 10,000 is the contract's figure.
  const sizes = quick ? [300] : [1000, 6000, 10000];
  // One run first, so what the first run opens for good (the watchdog's pipe, the runtime's threads) is in the baseline.
  await api.exec({ command: 'true' });
  for (const wanted of sizes) {
    // Two descriptors per live pipe session where one ring waits for every exit, three with a pidfd
    // each (see processTracking().exitWatch): what the file limit allows is what runs.
    const perSession = api.processTracking().exitWatch === 'io_uring' ? 2 : 3;
    const room = Math.floor((openFileLimit() - fds() - 64) / perSession);
    const n = Math.min(wanted, room);
    if (n < wanted) console.log(`(${wanted} sessions do not fit in this process's open-file limit of ${openFileLimit()}: ${n} instead; raise it with ulimit -n)`);
    const fdBase = fds();
    const threadBase = threads();
    const rssBase = rss();
    const ids = [];
    let t = performance.now();
    for (let i = 0; i < n; i++) ids.push((await api.exec({ command: 'sleep 600', background: true, scopeKey: 'bench' })).sessionId);
    const startEach = (performance.now() - t) / n;
    t = performance.now();
    api.listSessions({ scopeKey: 'bench' });
    const listFirst = performance.now() - t;
    const list = await timeMany(20, () => api.listSessions({ scopeKey: 'bench' }));
    const poll = await timeMany(50, () => api.pollSession(ids[n >> 1], { scopeKey: 'bench' }));
    const threadsWith = threads();
    const fdsWith = fds();
    const rssWith = rss();
    t = performance.now();
    await Promise.all(ids.map((id) => api.removeSession(id, { scopeKey: 'bench' })));
    const removeAll = performance.now() - t;
    const deadline = Date.now() + 60000;
    while (fds() > fdBase && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const fdsAfter = fds();

    // The same children through child_process: start each, then kill all and wait for every exit.
    const kids = [];
    t = performance.now();
    for (let i = 0; i < n; i++) {
      const k = spawn('sleep', ['600'], { stdio: ['ignore', 'pipe', 'pipe'] });
      await new Promise((r) => k.once('spawn', r));
      kids.push(k);
    }
    const cpStartEach = (performance.now() - t) / n;
    t = performance.now();
    await Promise.all(kids.map((k) => new Promise((r) => { k.once('exit', r); k.kill('SIGTERM'); })));
    const cpKillAll = performance.now() - t;
    for (const k of kids) { k.stdout.destroy(); k.stderr.destroy(); }

    record(`start of one background session, ${n} live`, 'ms', startEach, { child_process: cpStartEach });
    record(`listSessions with ${n} live sessions, median`, 'ms', list.median, {}, '< 10 ms');
    record(`first listSessions with ${n} live sessions (builds the kept copy)`, 'ms', listFirst, {});
    record(`pollSession of one with ${n} live, median`, 'ms', poll.median, {}, '< 1 ms');
    record(`remove all ${n} live sessions (SIGTERM, wait for every process)`, 'ms', removeAll, { 'child_process kill all': cpKillAll });
    record(`fds per live session (${fdsWith} with ${n} live, baseline ${fdBase})`, 'fds', (fdsWith - fdBase) / n, {}, '<= 2');
    record(`memory per live session (RSS growth / ${n})`, 'KiB', (rssWith - rssBase) / n / 1024, {});
    record(`threads with ${n} live sessions (baseline ${threadBase})`, 'threads', threadsWith, { baseline: threadBase }, 'flat');
    record(`fds after ${n} sessions ended (baseline ${fdBase}, ${fdsWith} while live)`, 'fds', fdsAfter, { baseline: fdBase }, 'back to baseline');
  }
}

(async () => {
  console.log(`agent-exec benchmarks${quick ? ' (quick)' : ''}: ${results.machine}, ${results.date}`);
  const groups = { exec: benchExecTrue, tracking: benchTracking, sandbox: benchSandbox, throughput: benchThroughput, flood: benchFlood, sessions: benchSessions };
  // Parts of the sandbox group on their own (the group runs both).
  const parts = {
    proxy: benchProxy,
    pause: async () => {
      const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-exec-bench-pause-'));
      try {
        await benchAfterAPause(cwd);
      } finally {
        fs.rmSync(cwd, { recursive: true, force: true });
      }
    },
    workloads: () => require('./sandbox-workloads.js').benchSandboxWorkloads({ api, record, stats, quick }),
    containers: () => require('./containers.js').benchContainers({ api, record, stats, quick }),
  };
  if (parts[only]) return parts[only]();
  if (only && !groups[only]) throw new Error(`--only takes one of ${[...Object.keys(groups), ...Object.keys(parts)].join(', ')}`);
  for (const [name, run] of Object.entries(groups)) if (!only || only === name) await run();
  if (only) return;
  // A quick run is a smoke test with fewer rounds: its figures do not replace the committed ones.
  if (quick) {
    console.log('a quick run: bench/results/ left as it was (run without --quick to record figures)');
    return;
  }
  const dir = path.join(__dirname, 'results');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'latest.json'), JSON.stringify(results, null, 2) + '\n');
  fs.writeFileSync(path.join(dir, 'chart.svg'), renderChart(results));
  console.log(`wrote bench/results/latest.json and bench/results/chart.svg`);
})().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
