'use strict';
// `npm install` in a clone of the repository builds the native addon, so the clone works at once.
// Installs from the registry never run this (npm skips `prepare` for tarballs): they use the prebuilt
// platform package instead.

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
if (!fs.existsSync(path.join(root, 'Cargo.toml'))) process.exit(0);

const cargo = spawnSync('cargo', ['--version'], { stdio: 'ignore' });
if (cargo.error || cargo.status !== 0) {
  console.warn('agent-exec: cargo was not found, so the native addon was not built. Install Rust (https://rustup.rs) and run `npm run build`.');
  process.exit(0);
}
const napi = path.join(root, 'node_modules', '.bin', process.platform === 'win32' ? 'napi.cmd' : 'napi');
if (!fs.existsSync(napi)) {
  console.warn('agent-exec: @napi-rs/cli is not installed (devDependencies skipped?); run `npm install` then `npm run build`.');
  process.exit(0);
}
const r = spawnSync(napi, ['build', '--platform', '--release'], { cwd: root, stdio: 'inherit' });
process.exit(r.status ?? 1);
