'use strict';
// Loads the native addon and turns "no binary for this platform" into an error that names the platform
// and the package that should have provided it.

function platformTriple() {
  const { platform, arch } = process;
  if (platform === 'linux') return `linux-${arch}-${require('./libc.js').detectLibc() === 'musl' ? 'musl' : 'gnu'}`;
  if (platform === 'win32') return `win32-${arch}-msvc`;
  return `${platform}-${arch}`;
}

const SUPPORTED = [
  'linux-x64-gnu',
  'linux-arm64-gnu',
  'linux-x64-musl',
  'linux-arm64-musl',
  'darwin-x64',
  'darwin-arm64',
  'win32-x64-msvc',
];

/**
 * A clone of the repository (the Rust sources sit beside package.json; the published package ships
 * only index.js and js/) whose addon was never built: the fix is a build, not a reinstall.
 */
function unbuiltCheckout(root) {
  const fs = require('node:fs');
  const path = require('node:path');
  return fs.existsSync(path.join(root, 'Cargo.toml')) && !fs.readdirSync(root).some((f) => f.endsWith('.node'));
}

function loadNative() {
  try {
    return require('../index.js');
  } catch (cause) {
    const triple = platformTriple();
    const known = SUPPORTED.includes(triple);
    const root = require('node:path').join(__dirname, '..');
    const message = unbuiltCheckout(root)
      ? `agent-exec's native addon is not built in this checkout (${root}): install Rust (https://rustup.rs), then run \`npm run build\` there (\`npm install\` builds it too).`
      : known
      ? `agent-exec could not load its native binary for ${triple}: the package agent-exec-${triple} is missing or broken. ` +
        'Reinstall without --no-optional / --omit=optional (remove node_modules and package-lock.json first if npm skipped it).'
      : `agent-exec has no prebuilt binary for this platform (${triple}). Prebuilt platforms: ${SUPPORTED.join(', ')}. ` +
        'To build from source, install Rust and run `npm run build` in the agent-exec package.';
    const err = new Error(message, { cause });
    err.code = unbuiltCheckout(root) ? 'ERR_AGENT_EXEC_NOT_BUILT' : 'ERR_AGENT_EXEC_UNSUPPORTED_PLATFORM';
    err.platform = triple;
    throw err;
  }
}

module.exports = { loadNative, platformTriple, SUPPORTED };
