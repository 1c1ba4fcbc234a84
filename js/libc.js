'use strict';
// Which C library this Linux host runs (glibc or musl, as on Alpine), decided the way napi-rs's own
// loader (../index.js) decides which binary to load, so that an error message names the package the
// loader looked for: /usr/bin/ldd's text, then the process report, then `ldd --version`.

const fs = require('node:fs');

/** `true` for musl, `false` for glibc, `null` when /usr/bin/ldd cannot be read. */
function fromFilesystem() {
  try {
    return fs.readFileSync('/usr/bin/ldd', 'utf8').includes('musl');
  } catch {
    return null;
  }
}

/** From Node's own report: glibc reports its runtime version; musl shows in the loaded objects. */
function fromReport() {
  if (typeof process.report?.getReport !== 'function') return null;
  // Without this the report resolves network interfaces, which can take seconds.
  const exclude = process.report.excludeNetwork;
  process.report.excludeNetwork = true;
  let report;
  try {
    report = process.report.getReport();
  } catch {
    return null;
  } finally {
    process.report.excludeNetwork = exclude;
  }
  if (report?.header?.glibcVersionRuntime) return false;
  if (Array.isArray(report?.sharedObjects)) return report.sharedObjects.some((f) => f.includes('libc.musl-') || f.includes('ld-musl-'));
  return null;
}

/** `ldd --version` names musl on musl hosts (and exits 1 there, printing to stderr). */
function fromLdd() {
  const r = require('node:child_process').spawnSync('ldd', ['--version'], { encoding: 'utf8' });
  if (r.error) return null;
  return `${r.stdout}${r.stderr}`.includes('musl');
}

/** `'musl'` or `'glibc'` on Linux (glibc when nothing can tell, as the loader assumes); `null` elsewhere. */
function detectLibc() {
  if (process.platform !== 'linux') return null;
  for (const method of [fromFilesystem, fromReport, fromLdd]) {
    const musl = method();
    if (musl !== null) return musl ? 'musl' : 'glibc';
  }
  return 'glibc';
}

module.exports = { detectLibc, fromFilesystem, fromReport, fromLdd };
