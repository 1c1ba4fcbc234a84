'use strict';
// The prebuilt path: the package and its linux-x64-gnu platform package, packed with `npm pack`,
// installed into a fresh project with no Rust toolchain on PATH, run a command. And the error a user
// gets on a platform with no binary.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync, spawnSync } = require('node:child_process');

const { tempDir } = require('./helpers.js');

const root = path.join(__dirname, '..');
const triple = 'linux-x64-gnu';
const supported = process.platform === 'linux' && process.arch === 'x64';

function npm(args, opts) {
  return execFileSync('npm', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], ...opts });
}

test('packed packages install and run with no Rust toolchain on PATH', { skip: !supported && 'prebuilt test targets linux-x64-gnu' }, () => {
  const work = tempDir('agent-exec-pack-');
  const platformDir = path.join(root, 'npm', triple);
  const binary = `agent-exec.${triple}.node`;
  fs.copyFileSync(path.join(root, binary), path.join(platformDir, binary));
  try {
    const rootTgz = npm(['pack', '--ignore-scripts', '--silent', '--pack-destination', work], { cwd: root }).trim().split('\n').pop();
    const platformTgz = npm(['pack', '--ignore-scripts', '--silent', '--pack-destination', work], { cwd: platformDir }).trim().split('\n').pop();
    const listing = execFileSync('tar', ['-tzf', path.join(work, rootTgz)], { encoding: 'utf8' });
    assert.ok(!/\.node$/m.test(listing), 'the main package carries no binary');
    assert.ok(!/Cargo\.toml|src\//m.test(listing), 'the main package carries no Rust sources');

    const project = path.join(work, 'consumer');
    fs.mkdirSync(project);
    fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true }));
    // A PATH with exactly node, npm and a shell, whatever else the host's bin directories hold (a
    // cargo in /usr/bin must not be reachable).
    const bin = path.join(work, 'bin');
    fs.mkdirSync(bin);
    const nodeDir = path.dirname(process.execPath);
    for (const [name, target] of [
      ['node', process.execPath],
      ['npm', fs.realpathSync(path.join(nodeDir, 'npm'))],
      ['sh', '/bin/sh'],
      ['bash', '/bin/bash'],
      ['env', '/usr/bin/env'],
    ]) {
      if (fs.existsSync(target)) fs.symlinkSync(target, path.join(bin, name));
    }
    const env = { ...process.env, PATH: bin };
    delete env.CARGO_HOME;
    delete env.RUSTUP_HOME;
    assert.equal(spawnSync('cargo', ['--version'], { env }).error?.code, 'ENOENT', 'cargo must not be reachable');
    // The runtime dependency (the MCP SDK) comes from the npm cache where it is there, else the registry.
    npm(['install', '--prefer-offline', '--no-audit', '--no-fund', path.join(work, rootTgz), path.join(work, platformTgz)], { cwd: project, env });
    const script = "require('agent-exec').exec({ command: 'echo prebuilt-ok' }).then((r) => process.stdout.write(r.status + ':' + r.output))";
    const out = execFileSync(process.execPath, ['-e', script], { cwd: project, env, encoding: 'utf8' });
    assert.equal(out, 'completed:prebuilt-ok\n');
    const cli = execFileSync(path.join(project, 'node_modules', '.bin', 'agent-exec'), ['run', '--', 'echo', 'cli-ok'], { cwd: project, env, encoding: 'utf8' });
    assert.match(cli, /^cli-ok\n\[completed\] exit code 0/);
    // The MCP server's dependency was installed with the package.
    const mcp = execFileSync(path.join(project, 'node_modules', '.bin', 'agent-exec'), ['mcp', '--help'], { cwd: project, env, encoding: 'utf8' });
    assert.match(mcp, /^Usage: agent-exec mcp/);
    const sdk = execFileSync(process.execPath, ['-e', "process.stdout.write(typeof require('@modelcontextprotocol/sdk/server/index.js').Server)"], { cwd: path.join(project, 'node_modules', 'agent-exec'), env, encoding: 'utf8' });
    assert.equal(sdk, 'function');
  } finally {
    fs.rmSync(path.join(platformDir, binary), { force: true });
    fs.rmSync(work, { recursive: true, force: true });
  }
});

test('a platform with no binary gets an error naming the platform', () => {
  const script = `
    Object.defineProperty(process, 'platform', { value: 'aix' });
    try { require(${JSON.stringify(path.join(root, 'js', 'index.js'))}); console.log('loaded'); }
    catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message, platform: e.platform })); }`;
  const out = JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' }));
  assert.equal(out.code, 'ERR_AGENT_EXEC_UNSUPPORTED_PLATFORM');
  assert.equal(out.platform, `aix-${process.arch}`);
  assert.match(out.message, new RegExp(`no prebuilt binary for this platform \\(aix-${process.arch}\\)`));
  assert.match(out.message, /linux-x64-gnu/);
});
