'use strict';
// The package's manifest as it is packed: without `prepare`, which builds the addon in a clone of the
// repository and means nothing in a tarball (npm 11 warns about it in every consuming project:
// "install scripts not yet covered by allowScripts"). `strip` keeps the original beside it, `restore`
// puts it back; `npm pack`/`npm publish` run them as prepack/postpack, and scripts/cross.sh pack-test,
// which packs with --ignore-scripts, runs them itself.
//
//   node scripts/pack-manifest.js strip|restore|check <tgz>

const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const root = path.join(__dirname, '..');
const manifest = path.join(root, 'package.json');
const kept = path.join(root, '.package.json.unpacked');

const [what, tgz] = process.argv.slice(2);
if (what === 'strip') {
  if (fs.existsSync(kept)) throw new Error(`${kept} exists: a pack was interrupted; run "node scripts/pack-manifest.js restore" first`);
  const text = fs.readFileSync(manifest, 'utf8');
  fs.writeFileSync(kept, text);
  const pkg = JSON.parse(text);
  delete pkg.scripts.prepare;
  fs.writeFileSync(manifest, `${JSON.stringify(pkg, null, 2)}\n`);
} else if (what === 'restore') {
  if (fs.existsSync(kept)) fs.renameSync(kept, manifest);
} else if (what === 'check') {
  const packed = JSON.parse(execFileSync('tar', ['-xzOf', tgz, 'package/package.json'], { encoding: 'utf8' }));
  const scripts = Object.keys(packed.scripts ?? {}).filter((s) => ['prepare', 'preinstall', 'install', 'postinstall'].includes(s));
  if (scripts.length) {
    console.error(`${tgz} carries install-time scripts (${scripts.join(', ')}): consumers' npm warns and may run them`);
    process.exit(1);
  }
} else {
  console.error('usage: node scripts/pack-manifest.js strip|restore|check <tgz>');
  process.exit(2);
}
