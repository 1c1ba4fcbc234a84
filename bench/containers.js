'use strict';
// The container host (issue 37): start-to-output latency of a run in a container against a local run,
// and 100 concurrent sessions over one engine connection. Needs an engine: AGENT_EXEC_BENCH_ENGINE (a
// DOCKER_HOST address; scripts/podman-engine.sh serves one) and an image with a shell,
// AGENT_EXEC_BENCH_IMAGE (default localhost/agent-exec-test:busybox).

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

async function benchContainers({ api, record, stats, quick }) {
  const engine = process.env.AGENT_EXEC_BENCH_ENGINE;
  if (!engine) {
    console.log('(no container figures: AGENT_EXEC_BENCH_ENGINE names no engine)');
    return;
  }
  const image = process.env.AGENT_EXEC_BENCH_IMAGE || 'localhost/agent-exec-test:busybox';
  const cwd = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'agent-exec-bench-ct-')));
  const host = { container: { image, engine, network: 'none' } };
  const scopeKey = `bench-containers-${process.pid}`;
  try {
    // The scope's container is made once; what is timed is a run in it.
    await api.exec({ command: 'true', cwd, scopeKey, host });
    const runs = quick ? 20 : 100;
    const inContainer = [];
    const local = [];
    for (let i = 0; i < runs; i++) {
      let t = process.hrtime.bigint();
      await api.exec({ command: 'echo hi', cwd, scopeKey, host });
      inContainer.push(Number(process.hrtime.bigint() - t) / 1e6);
      t = process.hrtime.bigint();
      await api.exec({ command: 'echo hi', cwd });
      local.push(Number(process.hrtime.bigint() - t) / 1e6);
    }
    record(`exec echo in the scope's container (${engine}), start to exit, median of ${runs}`, 'ms', stats(inContainer).median, { 'agent-exec local run': stats(local).median });
    // Concurrent sessions over the one client: all started, then all waited for.
    const n = quick ? 20 : 100;
    const t = process.hrtime.bigint();
    const started = await Promise.all(Array.from({ length: n }, () => api.exec({ command: 'sleep 1; echo done', cwd, scopeKey, host, background: true })));
    for (const s of started) {
      for (;;) {
        const info = api.getSession(s.sessionId, { scopeKey });
        if (!info || info.status !== 'running') break;
        await new Promise((r) => setTimeout(r, 20));
      }
    }
    const allMs = Number(process.hrtime.bigint() - t) / 1e6;
    const outputs = started.map((s) => api.readLog(s.sessionId, { scopeKey }).text);
    const ok = outputs.filter((o) => o === 'done').length;
    record(`${n} concurrent background runs of 'sleep 1; echo done' in one container, all done (${ok}/${n} right)`, 'ms', allMs, { 'one run alone': 1000 });
  } finally {
    fs.rmSync(cwd, { recursive: true, force: true });
  }
}

module.exports = { benchContainers };
