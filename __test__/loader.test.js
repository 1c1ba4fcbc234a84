'use strict';
// Which binary the package loads: the C library is detected on the real host (no faked files), every
// way of detecting it agrees, and the binary the loader picked is the one for that C library.

const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const libc = require('../js/libc.js');
const { platformTriple, SUPPORTED } = require('../js/native.js');

const linux = process.platform === 'linux';

test('the C library is detected as the host has it, and every way of asking agrees', { skip: !linux && 'C library detection is for Linux' }, () => {
  // The host's own answer: glibc's getconf knows its version; musl has no such variable.
  const getconf = spawnSync('getconf', ['GNU_LIBC_VERSION'], { encoding: 'utf8' });
  const expected = getconf.status === 0 && /^glibc /.test(getconf.stdout) ? 'glibc' : 'musl';
  assert.equal(libc.detectLibc(), expected);
  const answers = { filesystem: libc.fromFilesystem(), report: libc.fromReport(), ldd: libc.fromLdd() };
  for (const [how, musl] of Object.entries(answers)) {
    if (musl === null) continue; // that way cannot tell here (no /usr/bin/ldd, say)
    assert.equal(musl ? 'musl' : 'glibc', expected, `${how} disagrees`);
  }
  assert.ok(Object.values(answers).some((a) => a !== null), 'no way of detecting the C library worked');
});

test('the loader loaded the binary of the detected platform, which is a supported one', () => {
  require('../js/index.js');
  const triple = platformTriple();
  assert.ok(SUPPORTED.includes(triple), `${triple} is not a supported platform`);
  const loaded = Object.keys(require.cache).filter((f) => f.endsWith('.node')).map((f) => path.basename(f));
  // From the package directory (a build) or from the platform package (an install).
  const ours = loaded.filter((f) => f.startsWith('agent-exec.'));
  assert.deepEqual(ours, [`agent-exec.${triple}.node`], `loaded ${loaded.join(', ')}`);
});

test('a clone whose addon was never built says to build it, not to reinstall', () => {
  const fs = require('node:fs');
  const os = require('node:os');
  const root = path.join(__dirname, '..');
  const clone = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-exec-unbuilt-'));
  try {
    // What a fresh clone has: the sources and the JS, no .node file.
    for (const f of ['index.js', 'package.json', 'Cargo.toml']) fs.copyFileSync(path.join(root, f), path.join(clone, f));
    fs.cpSync(path.join(root, 'js'), path.join(clone, 'js'), { recursive: true });
    const r = spawnSync(process.execPath, [path.join(clone, 'js', 'cli.js'), 'demo'], { encoding: 'utf8', timeout: 30000, env: { ...process.env, NODE_PATH: '' } });
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /\[ERR_AGENT_EXEC_NOT_BUILT\] agent-exec's native addon is not built in this checkout .*install Rust \(https:\/\/rustup\.rs\), then run `npm run build`/);
    assert.doesNotMatch(r.stderr, /Reinstall/);
  } finally {
    fs.rmSync(clone, { recursive: true, force: true });
  }
});
