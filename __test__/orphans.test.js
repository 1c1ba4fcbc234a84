'use strict';
// Nothing left behind: whole-tree kills reach escaped descendants, sessions die with their host
// however it ends, and fds, threads and zombies return to baseline under load.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { monitorEventLoopDelay } = require('node:perf_hooks');

const { native, alive, waitFor, track, killTracked, readPids, tempDir } = require('./helpers.js');

test.after(killTracked);

/** Processes whose environment carries `NAME=value`. */
function withEnv(name, value) {
  const needle = Buffer.from(`${name}=${value}\0`);
  const out = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (fs.readFileSync(`/proc/${d}/environ`).includes(needle) && alive(Number(d))) out.push(Number(d));
    } catch {}
  }
  return out;
}

function escapees(dir) {
  return `setsid sh -c 'echo $$ >> ${dir}/pids; exec sleep 1000' & ` +
    `(setsid sh -c 'echo $$ >> ${dir}/pids; exec sleep 1001' &) ; ` +
    `nohup sh -c 'echo $$ >> ${dir}/pids; exec sleep 1002' > /dev/null 2>&1 & ` +
    `sleep 1003 & echo $! >> ${dir}/pids; wait`;
}

test('timeout and kill reach setsid, double-forked and nohup descendants', async () => {
  for (const how of ['timeout', 'kill']) {
    const dir = tempDir();
    const pending = native.exec({ command: escapees(dir), timeoutMs: how === 'timeout' ? 1500 : 0, killGraceMs: 300, background: how === 'kill' });
    if (how === 'kill') {
      const r = await pending;
      track(r.pid);
      await waitFor(() => readPids(path.join(dir, 'pids')).length === 4, { what: 'four descendants' });
      track(readPids(path.join(dir, 'pids')));
      const k = await native.killSession(r.sessionId);
      assert.deepEqual(k.survivors, []);
    } else {
      const r = await pending;
      track(r.pid, readPids(path.join(dir, 'pids')));
      assert.equal(r.timedOut, true);
      assert.deepEqual(r.survivors, []);
    }
    const pids = readPids(path.join(dir, 'pids'));
    assert.equal(pids.length, 4, how);
    for (const pid of pids) assert.equal(alive(pid), false, `${how}: pid ${pid} survived`);
  }
});

function hostScript(dir, ending) {
  return `
    const api = require(${JSON.stringify(path.join(__dirname, '..', 'js', 'index.js'))});
    const fs = require('fs');
    (async () => {
      for (let i = 0; i < 20; i++) {
        await api.exec({ command: 'sleep 1000 & echo $! >> ${dir}/pids; wait', background: true, pty: i % 2 === 1 });
      }
      const wait = () => new Promise((r) => setTimeout(r, 20));
      while ((fs.existsSync('${dir}/pids') ? fs.readFileSync('${dir}/pids', 'utf8').trim().split('\\n').length : 0) < 20) await wait();
      // Output logs: in the default dir, in a dir of the caller's, and one kept on purpose.
      const logged = await api.exec({ command: 'seq 1 2000', logAboveChars: 0 });
      const custom = await api.exec({ command: 'seq 1 2000', logAboveChars: 0, logDir: '${dir}/logs' });
      const kept = await api.exec({ command: 'seq 1 2000', logAboveChars: 0, logDir: '${dir}/kept', keepLogs: true });
      fs.writeFileSync('${dir}/logs.json', JSON.stringify({ gone: [logged.outputFile, custom.outputFile], kept: kept.outputFile }));
      fs.writeFileSync('${dir}/ready', String(process.pid));
      const end = ${JSON.stringify(ending === 'throw' ? "throw new Error('boom')" : ending === 'exit' ? 'process.exit(0)' : '')};
      const go = setInterval(() => {
        if (end && fs.existsSync('${dir}/go')) { clearInterval(go); if (end === 'process.exit(0)') process.exit(0); else throw new Error('boom'); }
      }, 20);
    })();`;
}

for (const ending of ['SIGKILL', 'SIGTERM', 'SIGINT', 'throw', 'exit']) {
  test(`a host ended by ${ending} takes its 20 sessions (pipes and PTYs) and its output logs with it`, async () => {
    const dir = tempDir();
    const mark = `orphan-test-${ending}-${process.pid}`;
    const script = hostScript(dir, ending);
    const host = spawn(process.execPath, ['-e', script], { env: { ...process.env, ORPHAN_MARK: mark }, stdio: 'ignore' });
    track(host.pid);
    try {
      await waitFor(() => fs.existsSync(path.join(dir, 'ready')), { what: 'the host to start its sessions', timeoutMs: 20000 });
      const pids = readPids(path.join(dir, 'pids'));
      track(pids);
      assert.equal(pids.length, 20);
      assert.ok(withEnv('ORPHAN_MARK', mark).length >= 40, 'shells and grandchildren are running');
      // The host ends only now, after the check: on the signal, or when told to throw or exit.
      if (ending.startsWith('SIG')) host.kill(ending);
      else fs.writeFileSync(path.join(dir, 'go'), '');
      await new Promise((res) => host.exitCode !== null || host.signalCode !== null ? res() : host.on('exit', res));
      await waitFor(() => withEnv('ORPHAN_MARK', mark).every((p) => p === host.pid || !alive(p)) && pids.every((p) => !alive(p)), {
        what: `every session process to end after ${ending}`,
        timeoutMs: 10000,
      });
      const logs = JSON.parse(fs.readFileSync(path.join(dir, 'logs.json'), 'utf8'));
      assert.equal(logs.gone.length, 2);
      for (const log of logs.gone) assert.ok(typeof log === 'string' && log.endsWith('.log'), `a log file was made: ${log}`);
      await waitFor(() => logs.gone.every((log) => !fs.existsSync(log)), { what: `the host's output logs to be removed after ${ending}`, timeoutMs: 10000 });
      assert.ok(fs.existsSync(logs.kept), 'a log kept on purpose (keepLogs) outlives the host');
    } finally {
      for (const p of withEnv('ORPHAN_MARK', mark)) {
        try {
          process.kill(p, 'SIGKILL');
        } catch {}
      }
    }
  });
}

test('2000 short runs: fds and threads back to baseline, no zombies', async () => {
  // Warm up so lazily created runtime threads and the watchdog are part of the baseline.
  for (let i = 0; i < 20; i++) await native.exec({ command: 'true' });
  const fds = () => fs.readdirSync('/proc/self/fd').length;
  const threads = () => Number(/Threads:\s+(\d+)/.exec(fs.readFileSync('/proc/self/status', 'utf8'))[1]);
  const fdBase = fds();
  const threadBase = threads();
  for (let batch = 0; batch < 100; batch++) {
    await Promise.all(Array.from({ length: 20 }, (_, i) => native.exec({ command: i % 2 ? 'true' : 'echo x; echo y >&2' })));
  }
  await waitFor(() => fds() <= fdBase, { what: `fds back to ${fdBase} (now ${fds()})` });
  // The runtime's blocking pool may have grown under load; its idle threads retire after 10 s.
  await waitFor(() => threads() <= threadBase + 2, { timeoutMs: 20000, what: `threads back near ${threadBase} (now ${threads()})` });
  const zombies = fs
    .readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        return fields[0] === 'Z' && Number(fields[1]) === process.pid;
      } catch {
        return false;
      }
    });
  assert.deepEqual(zombies, []);
});

test('16 sessions flooding output for 10 s: bounded memory, every flood runs to its timeout', async (t) => {
  const dir = tempDir();
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  const rssBefore = process.memoryUsage().rss;
  histogram.enable();
  const runs = Array.from({ length: 16 }, () =>
    native.exec({ command: 'yes', timeoutMs: 10000, killGraceMs: 200, logDir: dir, onOutput: () => {} }),
  );
  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 100);
  const results = await Promise.all(runs);
  clearInterval(sampler);
  histogram.disable();
  results.forEach((r) => track(r.pid));
  const growthMiB = (peak - rssBefore) / 1048576;
  const p99 = histogram.percentile(99) / 1e6;
  const totalMiB = results.reduce((n, r) => n + r.totalChars, 0) / 1048576;
  t.diagnostic(`flood: ${totalMiB.toFixed(0)} MiB of text in 10 s, rss growth ${growthMiB.toFixed(1)} MiB, event loop p99 ${p99.toFixed(2)} ms`);
  assert.ok(results.every((r) => r.timedOut && r.truncated), 'all floods ran to their timeout');
  assert.ok(growthMiB < 64, `memory grew ${growthMiB.toFixed(1)} MiB`);
  // The event loop's delay is a timing goal: `npm run bench -- --only flood` measures it against
  // child_process; here it is only reported.
  fs.rmSync(dir, { recursive: true, force: true });
});

test('200 concurrent mixed runs with random kills and timeouts: all accounted for, nothing left', async () => {
  const mark = `mixed-${process.pid}`;
  let seed = 12345;
  const rand = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
  const kinds = [];
  const runs = Array.from({ length: 200 }, (_, i) => {
    const r = rand();
    const env = { MIXED_MARK: mark };
    if (r < 0.3) {
      kinds.push('quick');
      return native.exec({ command: `echo run-${i}`, env });
    }
    if (r < 0.55) {
      kinds.push('timeout');
      return native.exec({ command: 'sleep 300 & sleep 301', env, timeoutMs: 200 + Math.floor(rand() * 500), killGraceMs: 100 });
    }
    if (r < 0.8) {
      kinds.push('abort');
      const ac = new AbortController();
      setTimeout(() => ac.abort(), Math.floor(rand() * 400));
      return native.exec({ command: 'sleep 300 | cat', env, signal: ac.signal, killGraceMs: 100 });
    }
    kinds.push('kill');
    return native.exec({ command: 'setsid sleep 300 & sleep 301', env, background: true }).then(async (bg) => {
      await new Promise((res) => setTimeout(res, Math.floor(rand() * 300)));
      const killed = await native.killSession(bg.sessionId);
      const after = await native.pollSession(bg.sessionId);
      return { ...bg, killed, after };
    });
  });
  const results = await Promise.all(runs);
  results.forEach((r) => track(r.pid));
  assert.equal(results.length, 200);
  results.forEach((r, i) => {
    if (kinds[i] === 'quick') assert.equal(r.output, `echo run-${i}`.slice(5) + '\n');
    if (kinds[i] === 'timeout') assert.equal(r.timedOut, true);
    if (kinds[i] === 'abort') assert.equal(r.aborted, true);
    if (kinds[i] === 'kill') {
      // What killSession answered: the session, nothing that survived SIGKILL, and a run that ended by
      // a signal (or exited on SIGTERM), which the session shows as no longer running.
      assert.equal(r.killed.sessionId, r.sessionId);
      assert.deepEqual(r.killed.survivors, []);
      assert.ok(r.killed.exitSignal || r.killed.exitCode !== undefined, JSON.stringify(r.killed));
      assert.equal(r.after.exited, true);
      assert.notEqual(r.after.status, 'running');
    }
  });
  await waitFor(() => withEnv('MIXED_MARK', mark).length === 0, { what: 'no marked process left', timeoutMs: 10000 });
});

/**
 * A command whose first action is a descendant that clears the session marker, calls `setsid` and
 * double-forks, so neither the marker nor the process group or session can find it.
 */
function markerlessEscapee(dir, then) {
  const py = [
    'import os',
    'if os.fork(): os._exit(0)',
    'os.setsid()',
    'if os.fork(): os._exit(0)',
    `open(${JSON.stringify(path.join(dir, 'escapee'))}, "w").write(str(os.getpid()))`,
    'os.execvp("sleep", ["sleep", "1000"])',
  ].join('\n');
  fs.writeFileSync(path.join(dir, 'escape.py'), py);
  return `env -u AGENT_EXEC_SESSION python3 ${path.join(dir, 'escape.py')}; ${then}`;
}

const tracking = native.processTracking();

for (const pty of [false, true]) {
  const over = pty ? 'a PTY' : 'pipes';
  test(`a kill reaches a descendant that cleared the marker, called setsid and double-forked first (${over})`, {
    skip: tracking.mechanism !== 'cgroup' && `this host tracks runs by marker: ${tracking.reason}`,
  }, async () => {
    const dir = tempDir();
    const r = await native.exec({ command: markerlessEscapee(dir, 'sleep 1000'), background: true, pty, killGraceMs: 300 });
    track(r.pid);
    const escapee = await waitFor(() => readPids(path.join(dir, 'escapee'))[0], { what: 'the escapee' });
    track(escapee);
    assert.ok(alive(escapee));
    const k = await native.killSession(r.sessionId);
    assert.deepEqual(k.survivors, []);
    await waitFor(() => !alive(escapee), { what: `escapee ${escapee} to die` });
  });
}

test('a run that ends with such a descendant still running reports it as left running', {
  skip: tracking.mechanism !== 'cgroup' && `this host tracks runs by marker: ${tracking.reason}`,
}, async () => {
  const dir = tempDir();
  const r = await native.exec({ command: markerlessEscapee(dir, `until [ -s ${dir}/escapee ]; do sleep 0.01; done`) });
  const escapee = readPids(path.join(dir, 'escapee'))[0];
  track(escapee);
  assert.equal(r.exitCode, 0);
  assert.ok(r.leftRunning.includes(escapee), `${escapee} not in ${JSON.stringify(r.leftRunning)}`);
  process.kill(escapee, 'SIGKILL');
  await waitFor(() => !alive(escapee), { what: 'the escapee to die' });
});

test('processTracking says how runs are tracked', () => {
  assert.ok(['cgroup', 'marker'].includes(tracking.mechanism));
  if (tracking.mechanism === 'cgroup') {
    assert.ok([1, 2].includes(tracking.cgroupVersion));
    assert.equal(tracking.reason, undefined);
    // A run's shell is in the run's own cgroup, not the host's.
    const own = fs.readFileSync('/proc/self/cgroup', 'utf8');
    return native.exec({ command: 'cat /proc/self/cgroup' }).then((r) => {
      assert.match(r.output, /agent-exec-\d+-/);
      assert.notEqual(r.output, own);
    });
  }
  assert.equal(typeof tracking.reason, 'string');
});

for (const pty of [false, true]) {
  test(`a SIGKILLed host takes a run's marker-less setsid escapee with it (${pty ? 'PTY' : 'pipes'})`, {
    skip: tracking.mechanism !== 'cgroup' && `this host tracks runs by marker: ${tracking.reason}`,
  }, async () => {
    const dir = tempDir();
    const command = markerlessEscapee(dir, 'sleep 1000');
    const script = `
      const api = require(${JSON.stringify(path.join(__dirname, '..', 'js', 'index.js'))});
      const fs = require('fs');
      (async () => {
        await api.exec({ command: ${JSON.stringify(command)}, background: true, pty: ${pty} });
        while (!(fs.existsSync('${dir}/escapee') && fs.readFileSync('${dir}/escapee', 'utf8'))) await new Promise((r) => setTimeout(r, 20));
        fs.writeFileSync('${dir}/ready', '1');
        setInterval(() => {}, 1000);
      })();`;
    const host = spawn(process.execPath, ['-e', script], { stdio: 'ignore' });
    track(host.pid);
    await waitFor(() => fs.existsSync(path.join(dir, 'ready')), { what: 'the host to start its run', timeoutMs: 20000 });
    const escapee = readPids(path.join(dir, 'escapee'))[0];
    track(escapee);
    assert.ok(alive(escapee));
    host.kill('SIGKILL');
    await waitFor(() => !alive(escapee), { what: `escapee ${escapee} to die with its host`, timeoutMs: 10000 });
    // The watchdog also removes the dead host's cgroups once they are empty.
    const mine = () => fs.readdirSync(tracking.cgroupParent).filter((n) => n.startsWith(`agent-exec-${host.pid}-`));
    await waitFor(() => mine().length === 0, { what: `no cgroup of host ${host.pid} left (${mine().join(', ')})`, timeoutMs: 10000 });
  });
}
