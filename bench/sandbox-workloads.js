'use strict';
// Issue 36's workloads (and issue 34's side-by-side): each run unsandboxed by agent-exec, sandboxed by
// agent-exec, and sandboxed by srt (Claude Code's sandbox runtime, @anthropic-ai/sandbox-runtime, which
// runs bubblewrap on Linux) where it can run here, interleaved round by round so a busy moment weighs on
// each the same. Every run gets a fresh directory prepared outside the timing; the time is the whole
// command as its caller waits for it (srt's includes starting its Node CLI and its proxies, which is
// what a Claude Code user pays per command).
//
// srt comes from npm into ~/.cache/agent-exec-bench/srt (once); it needs bubblewrap, socat and ripgrep
// (Debian: apt-get install bubblewrap socat ripgrep). Without them the srt column is left out and the
// reason printed.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync, spawn, spawnSync } = require('node:child_process');

const SRT_VERSION = '0.0.83';

/** The srt CLI, installed on first use; or the reason it cannot run here. */
function findSrt() {
  if (process.platform !== 'linux') return { reason: 'srt is compared on Linux only here' };
  const missing = [['bwrap', '--version'], ['socat', '-V'], ['rg', '--version']]
    .filter(([tool, flag]) => spawnSync(tool, [flag]).status !== 0)
    .map(([tool]) => tool);
  if (missing.length) return { reason: `srt needs ${missing.join(', ')} (apt-get install bubblewrap socat ripgrep)` };
  const dir = path.join(os.homedir(), '.cache', 'agent-exec-bench', 'srt');
  const bin = path.join(dir, 'node_modules', '.bin', 'srt');
  if (!fs.existsSync(bin)) {
    fs.mkdirSync(dir, { recursive: true });
    const r = spawnSync('npm', ['install', '--no-audit', '--no-fund', `@anthropic-ai/sandbox-runtime@${SRT_VERSION}`], { cwd: dir, encoding: 'utf8', timeout: 300000 });
    if (r.status !== 0 || !fs.existsSync(bin)) return { reason: `npm could not install srt: ${(r.stderr || '').trim().split('\n').pop()}` };
  }
  return { bin };
}

/** Run `command` in `dir` under srt with writes allowed in `dir` only and no network; resolves when it ends. */
function srtRun(bin, dir, command) {
  const settings = `${dir}.srt.json`;
  fs.writeFileSync(settings, JSON.stringify({
    network: { allowedDomains: [], deniedDomains: [] },
    filesystem: { denyRead: [], allowWrite: [dir], denyWrite: [] },
  }));
  return new Promise((resolve, reject) => {
    const c = spawn(bin, ['-s', settings, '-c', command], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    c.stdout.on('data', (d) => (out += d));
    c.stderr.on('data', (d) => (out += d));
    c.on('error', reject);
    c.on('close', (code) => {
      fs.rmSync(settings, { force: true });
      code === 0 ? resolve(out) : reject(new Error(`srt: exit ${code}: ${out.slice(-300)}`));
    });
  });
}

/** The inputs the workloads share, made once. */
function prepareInputs(base, quick) {
  const inputs = fs.mkdtempSync(path.join(base, 'agent-exec-bench-inputs-'));
  // A tarball of 5051 entries: a top directory, 50 directories, 5000 small files.
  const tree = path.join(inputs, 'tree');
  for (let d = 0; d < 50; d++) {
    fs.mkdirSync(path.join(tree, `d${d}`), { recursive: true });
    for (let f = 0; f < 100; f++) fs.writeFileSync(path.join(tree, `d${d}`, `f${f}.txt`), `file ${d}/${f}\n`);
  }
  const tarball = path.join(inputs, 'tree.tar');
  execFileSync('tar', ['cf', tarball, '-C', inputs, 'tree']);
  // A working tree of 2000 files for git to commit.
  const repo = path.join(inputs, 'repo');
  for (let d = 0; d < 20; d++) {
    fs.mkdirSync(path.join(repo, `src${d}`), { recursive: true });
    for (let f = 0; f < 100; f++) fs.writeFileSync(path.join(repo, `src${d}`, `m${f}.js`), `module.exports = ${d * 100 + f};\n`);
  }
  // A package of about 200 files, packed, for npm to install from its tarball.
  const pkg = path.join(inputs, 'pkg');
  fs.mkdirSync(path.join(pkg, 'lib'), { recursive: true });
  fs.writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name: 'bench-local-pkg', version: '1.0.0', main: 'lib/f0.js' }));
  for (let f = 0; f < 200; f++) fs.writeFileSync(path.join(pkg, 'lib', `f${f}.js`), `module.exports = ${f};\n`);
  const packed = execFileSync('npm', ['pack', '--silent', '--pack-destination', inputs], { cwd: pkg, encoding: 'utf8' }).trim().split('\n').pop();
  const pkgTarball = path.join(inputs, packed);
  const files = quick ? 1000 : 5000;
  return {
    dir: inputs,
    workloads: [
      { name: '`true`', command: 'true' },
      { name: `${files} file creations in a shell loop`, command: `for i in $(seq ${files}); do : > f$i; done` },
      { name: '`tar x` of 5051 entries, then `find | wc -l`', command: `tar xf ${tarball} && find . | wc -l` },
      {
        name: '`git add && git commit` of 2000 files in a new repository',
        // The repository is the host's, made before the run as a project's is: since 2026-11-27 a
        // sandboxed `git init` in a directory of the host's is refused (the host's git run there or
        // below would obey the repository's config), so the run commits into it as an agent does.
        setup: (dir) => {
          fs.cpSync(repo, dir, { recursive: true });
          execFileSync('git', ['init', '-q'], { cwd: dir });
        },
        // The sources by name: srt puts placeholders over dotfiles (`.bashrc`...) in the directory,
        // which `git add -A` refuses.
        command: 'git add src* && git -c user.name=bench -c user.email=bench@localhost commit -qm bench',
      },
      {
        name: '`npm install` of a local tarball of ~200 files',
        setup: (dir) => fs.writeFileSync(path.join(dir, 'package.json'), '{"name":"bench-app","version":"1.0.0"}'),
        // Its own cache in the directory: the run may write there and nowhere else.
        command: `npm install --offline --no-audit --no-fund --cache ./.npm-cache ${pkgTarball} > /dev/null`,
      },
    ],
  };
}

/**
 * Time each workload `rounds` times per runner, interleaved, and record the medians: agent-exec
 * sandboxed against agent-exec unsandboxed and srt.
 */
async function benchSandboxWorkloads({ api, record, stats, quick }) {
  // Every runner works on the same tmpfs, so the disk's own costs (an ext4 /tmp that has just deleted
  // thousands of files searches its recently deleted inodes on every create) do not drown the
  // sandbox's. Not /dev/shm: srt's bubblewrap gives the run a /dev of its own, where it is not there.
  const { base, release } = workDir();
  const srt = findSrt();
  if (srt.reason) console.log(`(no srt column: ${srt.reason})`);
  const inputs = prepareInputs(base, quick);
  const rounds = quick ? 3 : 7;
  try {
    for (const w of inputs.workloads) {
      const runners = {
        sandboxed: (dir) => api.exec({ command: w.command, cwd: dir, sandbox: { writableRoots: [dir] } }).then(check),
        unsandboxed: (dir) => api.exec({ command: w.command, cwd: dir }).then(check),
      };
      if (srt.bin) runners.srt = (dir) => srtRun(srt.bin, dir, w.command);
      const times = Object.fromEntries(Object.keys(runners).map((k) => [k, []]));
      for (let round = 0; round < rounds; round++) {
        for (const [who, run] of Object.entries(runners)) {
          const dir = fs.mkdtempSync(path.join(base, 'agent-exec-bench-wl-'));
          try {
            if (w.setup) w.setup(dir);
            const t = process.hrtime.bigint();
            await run(dir);
            times[who].push(Number(process.hrtime.bigint() - t) / 1e6);
          } finally {
            fs.rmSync(dir, { recursive: true, force: true });
          }
        }
      }
      const median = (who) => stats(times[who]).median;
      const baselines = { 'agent-exec unsandboxed': median('unsandboxed') };
      if (srt.bin) baselines[`srt ${SRT_VERSION}`] = median('srt');
      const srtNote = srt.bin ? `; srt/unsandboxed ${(median('srt') / median('unsandboxed')).toFixed(2)}` : '';
      record(`workload: ${w.name}, sandboxed, median of ${rounds}`, 'ms', median('sandboxed'), baselines, `issue 36: <= ${w.command === 'true' ? '1.25' : '1.15'}x unsandboxed${srtNote}`);
    }
  } finally {
    fs.rmSync(inputs.dir, { recursive: true, force: true });
    release();
  }
}

/** A tmpfs of the bench's own where it can mount one (root), else the temp dir (said so). */
function workDir() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-exec-bench-tmpfs-'));
  const mounted = process.getuid?.() === 0 && spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=4g,mode=0755', 'tmpfs', dir]).status === 0;
  if (!mounted) console.log(`(workloads on ${os.tmpdir()}'s file system: a tmpfs of the bench's own needs root)`);
  return {
    base: dir,
    release: () => {
      if (mounted) spawnSync('umount', [dir]);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A run that failed would time nothing useful: say so. */
function check(r) {
  if (r.exitCode !== 0) throw new Error(`exit ${r.exitCode}: ${r.output.slice(-300)}`);
  return r;
}

module.exports = { benchSandboxWorkloads };
