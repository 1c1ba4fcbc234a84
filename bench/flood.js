'use strict';
// One flood measurement in a fresh process (so memory growth is not skewed by earlier runs):
//   node bench/flood.js agent-exec|child_process <seconds>
// Prints {"p99": ms, "growthMiB": MiB}.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { monitorEventLoopDelay } = require('node:perf_hooks');

const [variant, secondsArg] = process.argv.slice(2);
const seconds = Number(secondsArg || 10);
const shell = fs.existsSync('/bin/bash') ? '/bin/bash' : '/bin/sh';

function agentExec(logDir) {
  const api = require('../js/index.js');
  return Promise.all(Array.from({ length: 16 }, () => api.exec({ command: 'yes', timeoutMs: seconds * 1000, killGraceMs: 100, logDir })));
}

// The usual hand-rolled alternative: spawn, keep the newest 200000 characters, kill at the deadline.
function childProcess() {
  return Promise.all(
    Array.from(
      { length: 16 },
      () =>
        new Promise((resolve) => {
          const child = spawn(shell, ['-c', 'yes'], { stdio: ['ignore', 'pipe', 'pipe'] });
          let kept = '';
          child.stdout.on('data', (d) => {
            kept = (kept + d.toString('utf8')).slice(-200000);
          });
          setTimeout(() => child.kill('SIGKILL'), seconds * 1000);
          child.on('close', resolve);
        }),
    ),
  );
}

(async () => {
  const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-exec-bench-flood-'));
  if (variant === 'agent-exec') {
    // Load the addon and start its runtime before the baseline is taken.
    await require('../js/index.js').exec({ command: 'true' });
  }
  const h = monitorEventLoopDelay({ resolution: 1 });
  const before = process.memoryUsage().rss;
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
  h.enable();
  await (variant === 'agent-exec' ? agentExec(logDir) : childProcess());
  h.disable();
  clearInterval(sampler);
  fs.rmSync(logDir, { recursive: true, force: true });
  process.stdout.write(JSON.stringify({ p99: h.percentile(99) / 1e6, growthMiB: (peak - before) / 1048576 }) + '\n');
})();
