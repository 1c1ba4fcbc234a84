'use strict';
// `agent-exec mcp` driven by a client nobody on this project wrote: the Python MCP SDK (PyPI `mcp`),
// through __test__/fixtures/mcp_python_client.py. The client reports what it saw; this test checks that
// and the world: the files the commands would make, and that a cancelled call left no process.
//
// The SDK comes from AGENT_EXEC_MCP_PYTHON (a Python with `mcp` installed; .ci/run makes one in a venv)
// or the python3 on PATH; without it the test skips and says so.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawn, spawnSync } = require('node:child_process');

const { tempDir, hostPids, track, killTracked, waitFor } = require('./helpers.js');

test.after(killTracked);

const python = process.env.AGENT_EXEC_MCP_PYTHON || 'python3';
const sdk = spawnSync(python, ['-c', 'import importlib.metadata as m; print(m.version("mcp"))'], { encoding: 'utf8' });
const missing = sdk.status === 0 ? false : `the Python MCP SDK is not installed (pip install mcp, or set AGENT_EXEC_MCP_PYTHON)`;
if (process.env.AGENT_EXEC_MCP_PYTHON && missing) throw new Error(`AGENT_EXEC_MCP_PYTHON=${python} has no mcp package: ${sdk.stderr}`);

test(`the Python SDK's client (mcp ${sdk.stdout.trim() || 'missing'}): tools, rules, elicitation, cancellation`, { skip: missing, timeout: 120000 }, async () => {
  const dir = tempDir('agent-exec-mcp-py-');
  fs.writeFileSync(path.join(dir, 'keep'), 'x');
  const token = `61.${process.pid}${Date.now() % 100000}`;
  const client = spawn(python, [path.join(__dirname, 'fixtures', 'mcp_python_client.py'), process.execPath, path.join(__dirname, '..', 'js', 'cli.js'), dir, token], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  track(client.pid);
  let stdout = '';
  let stderr = '';
  client.stdout.on('data', (d) => (stdout += d));
  client.stderr.on('data', (d) => (stderr += d));
  const code = await new Promise((res) => client.on('exit', (c, s) => res(c ?? s)));
  assert.equal(code, 0, stderr);
  const seen = JSON.parse(stdout);

  assert.deepEqual(seen.tools, ['run', 'poll', 'log', 'write', 'send_keys', 'kill', 'list']);
  assert.match(seen.echo.text, /^from-python\n\n\[exit code 0 after/);
  // Asked through the SDK's elicitation: the first answer denies, the second allows once.
  assert.equal(seen.denied.text, 'Not run: the user denied it.');
  assert.equal(fs.existsSync(path.join(dir, 'denied-by-user')), false);
  assert.equal(seen.allowed.isError, false, seen.allowed.text);
  assert.ok(fs.existsSync(path.join(dir, 'allowed-by-user')));
  assert.match(seen.forms[0].message, /touch denied-by-user/);
  assert.deepEqual(seen.forms[0].schema.properties.decision.oneOf.map((o) => o.const), ['allow-once', 'allow-always', 'deny']);
  // A deny rule is not a question.
  assert.match(seen.rm.text, /^Not run: the server's policy refused it/);
  assert.equal(seen.forms.length, 3, 'the rm was not asked; the cancelled command was');
  assert.ok(fs.existsSync(path.join(dir, 'keep')));
  // The SDK gave up on the long call and cancelled it: its whole tree ended, and the server served on.
  assert.notEqual(seen.cancel, 'completed');
  assert.equal(seen.left_after_cancel, 0, 'processes of the cancelled call still ran with the session open');
  assert.match(seen.after.text, /^still-serving\n/);
  await waitFor(() => hostPids(token).length === 0, { what: 'the cancelled run to leave no process', timeoutMs: 15000 });
  assert.equal(fs.existsSync(path.join(dir, 'late')), false, 'the cancelled shell went on');
});
