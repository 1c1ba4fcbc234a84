'use strict';
// Nothing inherited: a run starts with descriptors 0-2 only, even when the agent's own parent left a
// file open without close-on-exec. Checked by the canary file staying empty, over every spawn path.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const { native, tempDir } = require('./helpers.js');

const caps = native.sandboxCapabilities();

/**
 * Runs a host Node process with `canary` open for writing as its fd 3 (inherited, so not
 * close-on-exec), which execs `modes` and reports each run's descriptors.
 */
function hostWithLeakedFd(canary, modes, env = {}) {
  const dir = path.dirname(canary);
  const script = `
    const api = require(${JSON.stringify(path.join(__dirname, '..', 'js', 'index.js'))});
    (async () => {
      const out = {};
      for (const mode of ${JSON.stringify(modes)}) {
        const r = await api.exec({
          command: 'echo leaked >&3; ls /proc/$$/fd; true',
          cwd: ${JSON.stringify(dir)},
          pty: mode === 'pty',
          sandbox: mode === 'sandbox' ? true : undefined,
        });
        out[mode] = r.output.split(/\\s+/).filter((x) => /^\\d+$/.test(x)).map(Number);
      }
      console.log(JSON.stringify({ out, tracking: api.processTracking().mechanism }));
    })();`;
  const fd = fs.openSync(canary, 'a');
  try {
    const r = spawnSync(process.execPath, ['-e', script], {
      stdio: ['ignore', 'pipe', 'pipe', fd],
      env: { ...process.env, SHELL: '/bin/bash', ...env },
      encoding: 'utf8',
      timeout: 60000,
    });
    assert.equal(r.status, 0, r.stderr);
    return JSON.parse(r.stdout.trim().split('\n').pop());
  } finally {
    fs.closeSync(fd);
  }
}

test('a run cannot use a descriptor the host inherited, over pipes, a PTY and the sandbox', () => {
  const dir = tempDir();
  const canary = path.join(dir, 'canary');
  fs.writeFileSync(canary, '');
  const modes = ['pipes', 'pty', ...(caps.enforceable ? ['sandbox'] : [])];
  const { out } = hostWithLeakedFd(canary, modes);
  for (const mode of modes) assert.deepEqual(out[mode], [0, 1, 2], `${mode}: ${JSON.stringify(out[mode])}`);
  assert.equal(fs.readFileSync(canary, 'utf8'), '');
});

test('the same without tracking cgroups (the posix_spawn path)', () => {
  const dir = tempDir();
  const canary = path.join(dir, 'canary');
  fs.writeFileSync(canary, '');
  const { out, tracking } = hostWithLeakedFd(canary, ['pipes', 'pty'], { AGENT_EXEC_NO_CGROUP_TRACKING: '1' });
  assert.equal(tracking, 'marker');
  assert.deepEqual(out.pipes, [0, 1, 2]);
  assert.deepEqual(out.pty, [0, 1, 2]);
  assert.equal(fs.readFileSync(canary, 'utf8'), '');
});
