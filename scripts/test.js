'use strict';
// The whole test suite: Rust unit tests for the core, then the Node tests against the built addon.

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');

function step(title, cmd, args) {
  process.stdout.write(`\n== ${title}: ${cmd} ${args.join(' ')}\n`);
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) {
    process.stdout.write(`\n== ${title} failed (exit ${r.status ?? r.signal})\n`);
    process.exit(r.status || 1);
  }
}

const built = fs.readdirSync(root).some((f) => f.endsWith('.node'));
if (!built) step('build the addon', process.execPath, [path.join(root, 'node_modules/@napi-rs/cli/dist/cli.js'), 'build', '--platform', '--release']);
step('rust unit tests', 'cargo', ['test', '--workspace', '--lib', '--', '--test-threads=2']);
const files = fs
  .readdirSync(path.join(root, '__test__'))
  .filter((f) => f.endsWith('.test.js'))
  .sort()
  .map((f) => path.join('__test__', f));
step('node tests', process.execPath, ['--test', '--test-concurrency=1', ...files]);
