'use strict';
// `agent-exec mcp` started as a real child process and driven by the MCP SDK's own client over stdio:
// the tools it lists, runs in the foreground and the background, approvals through elicitation and
// through the fallback, and the promise that its sessions die with it.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
const { ElicitRequestSchema } = require('@modelcontextprotocol/sdk/types.js');
const { waitFor, tempDir, hostPids, track, killTracked } = require('./helpers.js');

const CLI = path.join(__dirname, '..', 'js', 'cli.js');
const open = [];

/** A server with these flags and a connected client; `elicit` answers approval forms when given. */
async function connect(flags, { elicit } = {}) {
  // The whole environment: the SDK passes only a few variables by default, and an emulated node (qemu) needs its own.
  const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', ...flags], stderr: 'pipe', env: { ...process.env } });
  const client = new Client({ name: 'agent-exec-test', version: '1.0.0' }, { capabilities: elicit ? { elicitation: {} } : {} });
  if (elicit) client.setRequestHandler(ElicitRequestSchema, elicit);
  await client.connect(transport);
  track(transport.pid);
  open.push(client);
  return { client, pid: transport.pid };
}

async function call(client, name, args) {
  const r = await client.callTool({ name, arguments: args });
  return { text: r.content.map((c) => c.text).join(''), isError: Boolean(r.isError) };
}

test.after(async () => {
  for (const c of open) await c.close().catch(() => {});
  killTracked();
});

test('it lists its tools with their schemas', async () => {
  const { client } = await connect(['--security', 'full']);
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((t) => t.name), ['run', 'poll', 'log', 'write', 'send_keys', 'kill', 'list']);
  const run = tools.find((t) => t.name === 'run');
  assert.deepEqual(run.inputSchema.required, ['command']);
  for (const k of ['command', 'cwd', 'timeout_ms', 'yield_ms', 'background', 'pty']) assert.ok(run.inputSchema.properties[k], k);
  await client.close();
});

test('run in the foreground: output and exit code; a failure is an error result', async () => {
  const cwd = tempDir('agent-exec-mcp-');
  const { client } = await connect(['--security', 'full', '--cwd', cwd]);
  const ok = await call(client, 'run', { command: 'echo "hello $((6*7))"; pwd' });
  assert.equal(ok.isError, false);
  assert.match(ok.text, new RegExp(`^hello 42\\n${fs.realpathSync(cwd)}\\n\\n\\[exit code 0 after \\d+ (ms|s)\\]$`));
  const bad = await call(client, 'run', { command: 'exit 3' });
  assert.equal(bad.isError, true);
  assert.match(bad.text, /\[exit code 3 after/);
  const typed = await call(client, 'run', { command: '' });
  assert.equal(typed.isError, true);
  assert.match(typed.text, /^\[ERR_INVALID_COMMAND\] /);
  const unknown = await call(client, 'poll', { session_id: 'no-such-session' });
  assert.equal(unknown.isError, true);
  assert.match(unknown.text, /^\[ERR_[A-Z_]+\] .*no-such-session/);
  await client.close();
});

test('background, poll, write, log and list', async () => {
  const { client } = await connect(['--security', 'full']);
  const started = await call(client, 'run', { command: 'read line; echo "got $line"; sleep 0.2; echo second', background: true });
  const id = /session (\S+) \(pid \d+\)/.exec(started.text)[1];
  assert.match((await call(client, 'list', {})).text, new RegExp(`^${id}  running`, 'm'));
  assert.match((await call(client, 'write', { session_id: id, data: 'ping\n', eof: true })).text, /^Wrote 5 bytes to session .* \(stdin closed\)\.$/);
  let polled = '';
  await waitFor(
    async () => {
      const p = await call(client, 'poll', { session_id: id, timeout_ms: 2000 });
      polled += p.text;
      return /completed \(exit code 0\)/.test(p.text);
    },
    { what: 'the session to complete', timeoutMs: 15000 },
  );
  assert.match(polled, /got ping/);
  assert.match(polled, /second/);
  assert.match((await call(client, 'log', { session_id: id })).text, /^got ping\nsecond/);
  await client.close();
});

test('a command the policy does not allow is denied when nobody can be asked, and does not run', async () => {
  const dir = tempDir('agent-exec-mcp-');
  const canary = path.join(dir, 'canary');
  const { client } = await connect(['--cwd', dir]);
  const r = await call(client, 'run', { command: `touch ${canary}` });
  assert.equal(r.isError, true);
  assert.match(r.text, /^Not run: it needs approval, nobody could be asked/);
  assert.equal(fs.existsSync(canary), false);
  await client.close();
});

test('where the client supports elicitation the user decides', async () => {
  const dir = tempDir('agent-exec-mcp-');
  const forms = [];
  let answer = 'deny';
  const { client } = await connect(['--cwd', dir, '--deny', 'Bash(rm:*)'], {
    elicit: async (req) => {
      forms.push(req.params);
      return { action: 'accept', content: { decision: answer } };
    },
  });
  const denied = await call(client, 'run', { command: 'touch denied.txt' });
  assert.equal(denied.text, 'Not run: the user denied it.');
  assert.equal(fs.existsSync(path.join(dir, 'denied.txt')), false);
  assert.match(forms[0].message, /touch denied\.txt/);
  assert.deepEqual(forms[0].requestedSchema.properties.decision.enum.includes('allow-once'), true);
  answer = 'allow-once';
  const allowed = await call(client, 'run', { command: 'touch allowed.txt' });
  assert.equal(allowed.isError, false, allowed.text);
  assert.ok(fs.existsSync(path.join(dir, 'allowed.txt')));
  // A deny rule is not a question.
  fs.writeFileSync(path.join(dir, 'keep'), 'x');
  const asked = forms.length;
  const rm = await call(client, 'run', { command: 'rm keep' });
  assert.match(rm.text, /^Not run: the server's policy refused it/);
  assert.equal(forms.length, asked);
  assert.ok(fs.existsSync(path.join(dir, 'keep')));
  await client.close();
});

test('a config file sets the policy; bad flags stop the server with a message', async () => {
  const dir = tempDir('agent-exec-mcp-');
  const config = path.join(dir, 'mcp.json');
  fs.writeFileSync(config, JSON.stringify({ cwd: dir, approval: { rules: { allow: ['Bash(echo:*)'], deny: ['Bash(touch:*)'] } } }));
  const { client } = await connect(['--config', config]);
  assert.match((await call(client, 'run', { command: 'echo from-config' })).text, /^from-config\n/);
  const denied = await call(client, 'run', { command: 'touch x' });
  assert.match(denied.text, /^Not run: the server's policy refused it .*Bash\(touch:\*\)/);
  assert.equal(fs.existsSync(path.join(dir, 'x')), false);
  await client.close();
  for (const [flags, message] of [
    [['--security', 'bogus'], /--security must be one of deny, allowlist, full/],
    [['--timeout', 'soon'], /--timeout needs a number/],
    [['--cwd', path.join(dir, 'missing')], /is not a directory/],
    [['--config', path.join(dir, 'missing.json')], /cannot be read/],
    [['--no-such-flag'], /Unknown option/],
  ]) {
    const r = spawnSync(process.execPath, [CLI, 'mcp', ...flags], { encoding: 'utf8', input: '' });
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, message);
    assert.equal(r.stdout, '', 'stdout belongs to the protocol');
  }
});

for (const how of ['the client disconnects', 'the server is SIGKILLed']) {
  test(`every session dies with the server when ${how}`, async () => {
    const token = `300.${process.pid}${Date.now() % 100000}${how.length}`;
    const { client, pid } = await connect(['--security', 'full']);
    await call(client, 'run', { command: `sleep ${token}`, background: true });
    await call(client, 'run', { command: `sh -c 'sleep ${token}' & sleep ${token}`, background: true });
    await waitFor(() => hostPids(token).length >= 3, { what: 'three sleeps to start' });
    track(hostPids(token));
    if (how === 'the client disconnects') await client.close();
    else process.kill(pid, 'SIGKILL');
    await waitFor(() => hostPids(token).length === 0, { what: 'every session process to die', timeoutMs: 15000 });
  });
}
