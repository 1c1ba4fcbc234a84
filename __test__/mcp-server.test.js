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
async function connect(flags, { elicit, env = {} } = {}) {
  // The whole environment: the SDK passes only a few variables by default, and an emulated node (qemu) needs its own.
  const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', ...flags], stderr: 'pipe', env: { ...process.env, ...env } });
  const client = new Client({ name: 'agent-exec-test', version: '1.0.0' }, { capabilities: elicit ? { elicitation: {} } : {} });
  if (elicit) client.setRequestHandler(ElicitRequestSchema, elicit);
  let stderr = '';
  transport.stderr.on('data', (d) => (stderr += d));
  await client.connect(transport);
  track(transport.pid);
  open.push(client);
  return { client, pid: transport.pid, stderr: () => stderr };
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

test('a quiet session with writable input is said to be waiting for input, in poll and list', async () => {
  const { client } = await connect(['--security', 'full'], { env: { OPENCLAW_PROCESS_INPUT_WAIT_IDLE_MS: '1000' } });
  const started = await call(client, 'run', { command: 'echo "Name?"; read name; echo "hi $name"', background: true, pty: true });
  const id = /session (\S+) \(pid \d+\)/.exec(started.text)[1];
  await waitFor(async () => /input-wait/.test((await call(client, 'list', {})).text), { what: 'a second of quiet', timeoutMs: 15000 });
  assert.match((await call(client, 'list', {})).text, new RegExp(`^${id}  running .* \\[input-wait\\]$`, 'm'));
  assert.match((await call(client, 'poll', { session_id: id })).text, /^Session \S+: running, no output for \d+s; it may be waiting for input \(write or send_keys\)\./);
  await call(client, 'write', { session_id: id, data: 'ada\r' });
  let polled = '';
  await waitFor(async () => {
    const p = await call(client, 'poll', { session_id: id, timeout_ms: 2000 });
    polled += p.text;
    return /completed/.test(p.text);
  }, { what: 'the answer', timeoutMs: 15000 });
  assert.match(polled, /hi ada/);
  await client.close();
});

test('a client without elicitation: a notice at startup, refusals that say why and which flag helps', async () => {
  const dir = tempDir('agent-exec-mcp-');
  const canary = path.join(dir, 'canary');
  const { client, stderr } = await connect(['--cwd', dir]);
  await waitFor(() => /does not offer elicitation/.test(stderr()), { what: 'the startup notice on stderr' });
  assert.match(stderr(), /agent-exec-test does not offer elicitation.*--allow-read-only/);
  const r = await call(client, 'run', { command: `touch ${canary}` });
  assert.equal(r.isError, true);
  assert.match(r.text, /^Not run: it needs approval, and this MCP client cannot ask the user/);
  assert.match(r.text, /--allow 'Bash\(touch:\*\)'/);
  assert.doesNotMatch(r.text, /timeout|timed out|in time/i, 'nothing timed out');
  assert.equal(fs.existsSync(canary), false);
  await client.close();
});

test('--allow-read-only on its own: read-only commands run, the rest is refused', async () => {
  const dir = tempDir('agent-exec-mcp-');
  fs.writeFileSync(path.join(dir, 'file.txt'), 'inside\n');
  const { client } = await connect(['--cwd', dir, '--allow-read-only']);
  const read = await call(client, 'run', { command: 'cat file.txt | wc -l' });
  assert.equal(read.isError, false, read.text);
  assert.match(read.text, /^1\n/);
  const write = await call(client, 'run', { command: 'touch made' });
  assert.equal(write.isError, true);
  assert.match(write.text, /^Not run/);
  assert.equal(fs.existsSync(path.join(dir, 'made')), false);
  await client.close();
});

test('an argument a tool does not take is refused and runs nothing; unknown sessions point to list', async () => {
  const dir = tempDir('agent-exec-mcp-');
  const { client } = await connect(['--security', 'full', '--cwd', dir]);
  const r = await call(client, 'run', { command: 'touch made', bogus: true });
  assert.equal(r.isError, true);
  assert.match(r.text, /^\[ERR_INVALID_OPTION\] run has no argument "bogus"; it takes command, cwd/);
  assert.equal(fs.existsSync(path.join(dir, 'made')), false);
  const unknown = await call(client, 'log', { session_id: 'no-such-session' });
  assert.match(unknown.text, /the list tool shows the current ones/);
  assert.doesNotMatch(unknown.text, /listSessions/);
  await client.close();
});

test('a cancelled call ends its command and every process it started', async () => {
  const dir = tempDir('agent-exec-mcp-');
  const token = `60.${process.pid}${Date.now() % 100000}`;
  const { client } = await connect(['--security', 'full', '--cwd', dir]);
  const ac = new AbortController();
  const pending = client.callTool({ name: 'run', arguments: { command: `sh -c 'sleep ${token}' & sleep ${token}; touch late`, yield_ms: 600000 } }, undefined, { signal: ac.signal });
  await waitFor(() => hostPids(token).length >= 2, { what: 'both sleeps to start' });
  track(hostPids(token));
  ac.abort('the user pressed stop');
  await assert.rejects(pending);
  await waitFor(() => hostPids(token).length === 0, { what: 'every process of the cancelled run to end', timeoutMs: 15000 });
  await waitFor(async () => !/running/.test((await call(client, 'list', {})).text), { what: 'the run to end (not left running)' });
  assert.equal(fs.existsSync(path.join(dir, 'late')), false, 'the shell went on after its sleep was killed');
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
  assert.deepEqual(forms[0].requestedSchema.properties.decision.oneOf.map((o) => o.const), ['allow-once', 'allow-always', 'deny']);
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

test('allow always says what it keeps and where; the server keeps its own approvals file', async () => {
  const home = tempDir('agent-exec-mcp-home-');
  const dir = tempDir('agent-exec-mcp-');
  const forms = [];
  const { client } = await connect(['--cwd', dir], {
    env: { HOME: home },
    // Allow always where it is offered, else allow once (the SDK refuses an answer outside the form).
    elicit: async (req) => {
      forms.push(req.params);
      const offered = req.params.requestedSchema.properties.decision.oneOf.map((o) => o.const);
      return { action: 'accept', content: { decision: offered.includes('allow-always') ? 'allow-always' : 'allow-once' } };
    },
  });
  const r = await call(client, 'run', { command: 'uname -s' });
  assert.equal(r.isError, false, r.text);
  const own = path.join(home, '.agent-exec', 'mcp-exec-approvals.json');
  assert.match(forms[0].message, new RegExp(`Allow always adds /\\S*uname to the allowlist of agent "main" in ${own.replace(/[.]/g, '\\.')}`));
  const stored = JSON.parse(fs.readFileSync(own, 'utf8')).agents.main.allowlist.map((e) => e.pattern);
  assert.equal(stored.length, 1);
  assert.match(stored[0], /\/uname$/);
  assert.equal(fs.existsSync(path.join(home, '.openclaw')), false, "OpenClaw's approvals file was touched");
  // A runner is not offered for always, and the form says why.
  const py = await call(client, 'run', { command: 'python3 -c "print(6*7)"' });
  assert.match(py.text, /^42\n/);
  assert.deepEqual(forms[1].requestedSchema.properties.decision.oneOf.map((o) => o.const), ['allow-once', 'deny']);
  assert.match(forms[1].message, /Allow always is not offered: allow always would add \S*python3\S* to the allowlist/);
  await client.close();
  // Under rules, allow always adds the rule the form named, for the server's life.
  const ruled = await connect(['--cwd', dir, '--allow', 'Bash(echo:*)'], {
    env: { HOME: home },
    elicit: async (req) => (forms.push(req.params), { action: 'accept', content: { decision: 'allow-always' } }),
  });
  const asked = forms.length;
  assert.equal((await call(ruled.client, 'run', { command: 'touch one' })).isError, false);
  assert.match(forms.at(-1).message, /Allow always adds the rule Bash\(touch:\*\) for as long as this server runs/);
  assert.equal((await call(ruled.client, 'run', { command: 'touch two' })).isError, false);
  assert.equal(forms.length, asked + 1, 'the rule allow always added did not hold');
  assert.ok(fs.existsSync(path.join(dir, 'two')));
  await ruled.client.close();
});

test('sandboxed runs: refusals a passing command coped with do not read as a failure', { skip: !require('../js/index.js').sandboxCapabilities().enforceable && 'this host cannot sandbox' }, async () => {
  const dir = tempDir('agent-exec-mcp-');
  const outside = path.join(tempDir('agent-exec-mcp-outside-'), 'nope');
  const { client } = await connect(['--security', 'full', '--cwd', dir, '--sandbox']);
  const coped = await call(client, 'run', { command: `touch ${outside} 2>/dev/null; echo built` });
  assert.equal(coped.isError, false, coped.text);
  assert.match(coped.text, new RegExp(`The command succeeded; the sandbox refused along the way, and the command coped: \\S+ ${outside.replace(/[.]/g, '\\.')}`));
  const failed = await call(client, 'run', { command: `touch ${outside}` });
  assert.equal(failed.isError, true);
  assert.match(failed.text, /The sandbox refused: .* \(one of these may be why it failed\)/);
  assert.equal(fs.existsSync(outside), false);
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
    [['--allow', 'Bash(sh:*)'], /\[ERR_INVALID_RULE\] Bash\(sh:\*\) would allow any command through sh/],
    [['--allow', 'npm test'], /\[ERR_INVALID_RULE\] "npm test" is not a Bash rule/],
    [['--deny', 'Edit(x)'], /ERR_INVALID_RULE/],
    [['--approvals-file', config], /ERR_INVALID_APPROVALS_FILE/],
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
