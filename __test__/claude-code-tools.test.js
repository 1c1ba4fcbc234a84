'use strict';
// The Claude Code shaped tools (Bash, BashOutput, KillShell), exercised only through execute() with
// real processes, and their classifiers. Each permission test checks the world (a canary file) for
// whether the command ran, not only the text.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const api = require('../js/index.js');
const { pickShell } = require('../js/tools/claude-code/config.js');
const { native, alive, waitFor, track, killTracked, tempDir, watchSpawns } = require('./helpers.js');

const text = (r) => r.content[0].text;
const allowAll = () => 'allow';
const made = [];

function tools(options = {}) {
  const t = api.createClaudeCodeTools({ cwd: options.cwd ?? tempDir('agent-exec-cc-'), ...options });
  made.push(t);
  return t;
}

test.after(async () => {
  for (const t of made) await t.dispose();
  killTracked();
});

test('Bash has Claude Code input schema, defaults in its description, and companions', () => {
  const t = tools();
  assert.equal(t.bash.name, 'Bash');
  assert.deepEqual(Object.keys(t.bash.inputSchema.properties).sort(), ['command', 'dangerouslyDisableSandbox', 'description', 'run_in_background', 'timeout']);
  assert.deepEqual(t.bash.inputSchema.required, ['command']);
  assert.match(t.bash.inputSchema.properties.description.description, /active voice/);
  assert.match(t.bash.description, /default 120000, at most 600000/);
  assert.deepEqual(t.tools.map((x) => x.name), ['Bash', 'BashOutput', 'KillShell']);
  assert.deepEqual(t.bashOutput.inputSchema.required, ['bash_id']);
  assert.deepEqual(t.killShell.inputSchema.required, ['shell_id']);
});

test('a command runs and its output comes back; a failure says its exit code', async () => {
  const t = tools({ permissions: { allow: ['Bash(echo:*)', 'Bash(false)'] } });
  const ok = await t.bash.execute('1', { command: 'echo hello world', description: 'Print a greeting' });
  assert.equal(text(ok), 'hello world');
  assert.equal(ok.isError, false);
  assert.equal(ok.details.exitCode, 0);
  const bad = await t.bash.execute('2', { command: 'false' });
  assert.equal(text(bad), 'Exit code 1');
  assert.equal(bad.isError, true);
});

test('deny rules win, and a denied command does not run', async () => {
  const dir = tempDir('agent-exec-cc-');
  const canary = path.join(dir, 'canary');
  let asked = 0;
  const t = tools({ cwd: dir, permissions: { allow: ['Bash(touch:*)'], deny: ['Bash(touch:*)'] }, onPermissionRequest: () => (asked++, 'allow') });
  const { result: r, spawned } = await watchSpawns(() => t.bash.execute('1', { command: `touch ${canary}` }));
  assert.deepEqual(spawned, []);
  assert.equal(r.isError, true);
  assert.match(text(r), /^Permission to run this command was denied: .*matches Bash\(touch:\*\)/);
  assert.equal(asked, 0, 'a deny rule is not a question');
  assert.equal(fs.existsSync(canary), false);
});

test('every segment of a compound command must match; the rest asks, and no answer means no run', async () => {
  const dir = tempDir('agent-exec-cc-');
  const canary = path.join(dir, 'canary');
  const t = tools({ cwd: dir, permissions: { allow: ['Bash(echo:*)'] } });
  const { result: r, spawned } = await watchSpawns(() => t.bash.execute('1', { command: `echo ok && touch ${canary}` }));
  assert.deepEqual(spawned, []);
  assert.equal(r.isError, true);
  assert.match(text(r), /no one can be asked/);
  assert.equal(fs.existsSync(canary), false);
});

test('a command that cannot be parsed is never auto-allowed, even by a matching prefix rule', async () => {
  const dir = tempDir('agent-exec-cc-');
  const canary = path.join(dir, 'canary');
  const requests = [];
  const t = tools({ cwd: dir, permissions: { allow: ['Bash(echo:*)'] }, onPermissionRequest: (req) => (requests.push(req), 'deny') });
  const { result: r, spawned } = await watchSpawns(() => t.bash.execute('1', { command: `echo $(touch ${canary})` }));
  assert.deepEqual(spawned, []);
  assert.equal(requests.length, 1, 'it was asked');
  assert.match(requests[0].reason, /does not parse/);
  assert.equal(text(r), 'The user denied permission to run this command. It was not run.');
  assert.equal(fs.existsSync(canary), false);
});

test('read-only commands run without asking when enabled, and ask when not', async () => {
  const dir = tempDir('agent-exec-cc-');
  fs.writeFileSync(path.join(dir, 'file.txt'), 'inside\n');
  let asked = 0;
  const count = () => (asked++, 'deny');
  const on = tools({ cwd: dir, onPermissionRequest: count });
  const r = await on.bash.execute('1', { command: 'cat file.txt | wc -l' });
  assert.equal(text(r), '1');
  assert.equal(asked, 0);
  const off = tools({ cwd: dir, autoAllowReadOnly: false, onPermissionRequest: count });
  const { result: r2, spawned } = await watchSpawns(() => off.bash.execute('1', { command: 'cat file.txt' }));
  assert.deepEqual(spawned, []);
  assert.equal(asked, 1);
  assert.equal(r2.isError, true);
  assert.doesNotMatch(text(r2), /inside/, 'a denied read-only command ran');
});

test('allow-always adds the narrowest rule, never a wrapper rule, and the next call runs unasked', async () => {
  const dir = tempDir('agent-exec-cc-');
  const requests = [];
  const added = [];
  const t = tools({
    cwd: dir,
    onPermissionRequest: (req) => (requests.push(req), 'allow-always'),
    onRulesAdded: (rules) => added.push(...rules),
  });
  const r = await t.bash.execute('1', { command: 'touch one.txt', description: 'Create a file' });
  assert.equal(r.isError, false, text(r));
  assert.equal(requests.length, 1);
  assert.deepEqual(requests[0].suggestions, ['Bash(touch:*)']);
  assert.equal(requests[0].description, 'Create a file');
  assert.deepEqual(added, ['Bash(touch:*)']);
  assert.deepEqual(t.rules().allow, ['Bash(touch:*)']);
  await t.bash.execute('2', { command: 'touch two.txt' });
  assert.equal(requests.length, 1, 'the added rule allowed the second call');
  assert.ok(fs.existsSync(path.join(dir, 'two.txt')));
  // A wrapper's suggestion is the exact command, never `Bash(sh:*)`.
  await t.bash.execute('3', { command: 'sh -c "touch three.txt"' });
  assert.equal(requests.length, 2);
  for (const rule of requests[1].suggestions) assert.doesNotMatch(rule, /^Bash\((sh|env|sudo|bash)(:\*| \*)\)$/);
  assert.throws(() => api.createClaudeCodeTools({ permissions: { allow: ['Bash(sh:*)'] } }), { code: 'ERR_INVALID_RULE' });
  assert.throws(() => api.createClaudeCodeTools({ permissions: { allow: ['Bash(sudo:*)'] } }), { code: 'ERR_INVALID_RULE' });
});

test('the working directory follows cd across calls, per tool set', async () => {
  const dir = tempDir('agent-exec-cc-');
  fs.mkdirSync(path.join(dir, 'sub'));
  const t = tools({ cwd: dir, onPermissionRequest: allowAll });
  await t.bash.execute('1', { command: 'cd sub' });
  assert.equal(text(await t.bash.execute('2', { command: 'pwd' })), fs.realpathSync(path.join(dir, 'sub')));
  const other = tools({ cwd: dir, onPermissionRequest: allowAll });
  assert.equal(text(await other.bash.execute('3', { command: 'pwd' })), fs.realpathSync(dir));
});

test('commands see GIT_EDITOR=true and the agent marker; the shell follows Claude Code order', async () => {
  const t = tools({ onPermissionRequest: allowAll });
  const r = await t.bash.execute('1', { command: 'echo "$GIT_EDITOR $AGENT_EXEC_AGENT"' });
  assert.equal(text(r), 'true 1');
  const PATH = process.env.PATH;
  assert.equal(pickShell({ AGENT_EXEC_SHELL: '/bin/sh', SHELL: '/bin/bash', PATH }), '/bin/sh');
  assert.equal(pickShell({ SHELL: '/bin/bash', PATH }), '/bin/bash');
  assert.equal(pickShell({ SHELL: '/usr/bin/fish', PATH }), 'bash');
  assert.equal(pickShell({ SHELL: '/nonexistent/zsh', PATH }), 'bash');
  const noBash = tempDir('agent-exec-cc-path-');
  fs.symlinkSync('/bin/sh', path.join(noBash, 'sh'));
  assert.equal(pickShell({ PATH: noBash }), 'sh', 'no bash on PATH (Alpine): sh');
});

test('timeout: the default, the cap, and the text of a timed-out command', async () => {
  const t = tools({ onPermissionRequest: allowAll, maxTimeoutMs: 800, defaultTimeoutMs: 300 });
  const r = await t.bash.execute('1', { command: 'sleep 5' });
  assert.equal(r.details.timedOut, true);
  assert.match(text(r), /^Command timed out after 300ms\./);
  const capped = await t.bash.execute('2', { command: 'sleep 5', timeout: 60000 });
  assert.match(text(capped), /^Note: timeout 60000 ms is above the maximum; 800 ms applies\.\nCommand timed out after 800ms\./);
  const plain = tools();
  assert.match(plain.bash.description, /default 120000, at most 600000/);
});

test('past the blocking budget a command moves to the background, with its output file', async () => {
  const t = tools({ onPermissionRequest: allowAll, blockingBudgetMs: 400 });
  const r = await t.bash.execute('1', { command: 'echo start; sleep 1.5; echo end' });
  const m = /^Command running in background with ID: (\S+)\. It was still running after 400ms, so it was moved to the background\. Output is being written to: (\S+)\. Use BashOutput /.exec(text(r));
  assert.ok(m, text(r));
  const [, id, file] = m;
  assert.equal(r.details.backgroundId, id);
  assert.ok(fs.existsSync(file), 'the output file exists');
  let seen = '';
  await waitFor(
    async () => {
      const o = await t.bashOutput.execute('2', { bash_id: id });
      seen += text(o);
      return /<status>completed<\/status>/.test(text(o));
    },
    { what: 'the background command to end', timeoutMs: 15000 },
  );
  assert.match(seen, /<stdout>\nstart\n<\/stdout>/);
  assert.match(seen, /<exit_code>0<\/exit_code>/);
  assert.match(seen, /end/);
  assert.match(fs.readFileSync(file, 'utf8'), /start\nend\n/);
});

test('run_in_background returns at once; BashOutput filters lines; KillShell ends the whole tree', async () => {
  const dir = tempDir('agent-exec-cc-');
  const pidFile = path.join(dir, 'child.pid');
  const t = tools({ cwd: dir, onPermissionRequest: allowAll });
  const r = await t.bash.execute('1', {
    command: `sleep 300 & echo $! > ${pidFile}; for i in 1 2 3 4; do echo "line $i"; done; echo done-writing; wait`,
    run_in_background: true,
  });
  const id = r.details.backgroundId;
  assert.match(text(r), new RegExp(`^Command running in background with ID: ${id}\\. Output is being written to: `));
  await waitFor(() => fs.existsSync(pidFile) && fs.readFileSync(pidFile, 'utf8').trim() !== '', { what: 'the child pid' });
  const child = Number(fs.readFileSync(pidFile, 'utf8'));
  track(child);
  let filtered = '';
  await waitFor(
    async () => {
      filtered += text(await t.bashOutput.execute('2', { bash_id: id, filter: 'line [24]|done' }));
      return /done-writing/.test(filtered);
    },
    { what: 'the filtered output' },
  );
  assert.match(filtered, /line 2\nline 4/);
  assert.doesNotMatch(filtered, /line 1|line 3/);
  const killed = await t.killShell.execute('3', { shell_id: id });
  assert.match(text(killed), new RegExp(`^Successfully killed shell: ${id} \\(sleep 300 &`));
  await waitFor(() => !alive(child), { what: 'the backgrounded sleep to die' });
  const again = await t.killShell.execute('4', { shell_id: id });
  assert.match(text(again), /is not running, so it cannot be killed/);
  assert.equal(text(await t.bashOutput.execute('5', { bash_id: 'no-such-id' })), 'No background shell found with ID: no-such-id');
  // Another tool set's scope does not see this one's sessions.
  assert.equal(text(await tools().killShell.execute('6', { shell_id: id })), `No background shell found with ID: ${id}`);
});

test('output over the cap is a head-and-tail preview with the full output on disk', async () => {
  const t = tools({ onPermissionRequest: allowAll, maxOutputChars: 2000 });
  const r = await t.bash.execute('1', { command: 'seq 1 20000' });
  const body = text(r);
  assert.ok(body.length < 2600, `${body.length} chars`);
  assert.match(body, /^1\n2\n3\n/);
  assert.match(body, /\n20000\n\nOutput was cut: \d+ characters, more than the 2000 shown\. The full output is in (\S+); read it there for the rest\.$/);
  assert.equal(r.details.truncated, true);
  const file = /The full output is in (\S+);/.exec(body)[1];
  assert.equal(fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).length, 20000);
});

test('progress is reported while a command runs, with the last lines and counts', async () => {
  const reports = [];
  const t = tools({ onPermissionRequest: allowAll, progressAfterMs: 200, progressEveryMs: 200, blockingBudgetMs: 0 });
  await t.bash.execute('1', { command: 'for i in 1 2 3; do echo "step $i"; sleep 0.5; done; printf partial' }, undefined, (p) => reports.push(p));
  assert.ok(reports.length >= 2, `${reports.length} reports`);
  const last = reports[reports.length - 1];
  assert.ok(last.totalLines >= 1 && last.totalBytes >= 7, JSON.stringify(last));
  assert.ok(reports.some((p) => p.lastLines.includes('step 1')), JSON.stringify(reports));
  assert.equal(typeof last.incomplete, 'boolean');
  for (let i = 1; i < reports.length; i++) assert.ok(reports[i].totalBytes >= reports[i - 1].totalBytes);
});

const caps = native.sandboxCapabilities();
const noSandbox = !caps.enforceable && `this host cannot sandbox: ${caps.problems.join('; ')}`;

test('sandboxed by default; excludedCommands skip it; dangerouslyDisableSandbox only where the policy allows', { skip: noSandbox }, async () => {
  const project = tempDir('agent-exec-cc-project-');
  const elsewhere = tempDir('agent-exec-cc-elsewhere-');
  const strict = tools({ cwd: project, onPermissionRequest: allowAll, sandbox: { allowUnsandboxedCommands: false, excludedCommands: ['mkdir'] } });
  const blocked = await strict.bash.execute('1', { command: `touch ${elsewhere}/sandboxed` });
  assert.equal(blocked.isError, true, text(blocked));
  assert.equal(fs.existsSync(path.join(elsewhere, 'sandboxed')), false);
  assert.equal(blocked.details.sandboxed, true);
  const inside = await strict.bash.execute('2', { command: 'touch inside' });
  assert.equal(inside.isError, false, text(inside));
  assert.ok(fs.existsSync(path.join(project, 'inside')));
  const refused = await strict.bash.execute('3', { command: `touch ${elsewhere}/override`, dangerouslyDisableSandbox: true });
  assert.match(text(refused), /^dangerouslyDisableSandbox is not allowed here/);
  assert.equal(fs.existsSync(path.join(elsewhere, 'override')), false);
  const excluded = await strict.bash.execute('4', { command: `mkdir ${elsewhere}/excluded` });
  assert.equal(excluded.details.sandboxed, false);
  assert.ok(fs.existsSync(path.join(elsewhere, 'excluded')));
  const lenient = tools({ cwd: project, onPermissionRequest: allowAll, sandbox: true });
  const out = await lenient.bash.execute('5', { command: `touch ${elsewhere}/unsandboxed`, dangerouslyDisableSandbox: true });
  assert.equal(out.isError, false, text(out));
  assert.ok(fs.existsSync(path.join(elsewhere, 'unsandboxed')));
});

test('isSearchOrReadCommand and isReadOnly', () => {
  assert.deepEqual(api.isSearchOrReadCommand('grep -rn foo . | head -5'), { isSearch: true, isRead: true, collapsible: true });
  assert.deepEqual(api.isSearchOrReadCommand('cat README.md'), { isSearch: false, isRead: true, collapsible: true });
  assert.deepEqual(api.isSearchOrReadCommand('npm install'), { isSearch: false, isRead: false, collapsible: false });
  assert.deepEqual(api.isSearchOrReadCommand('cat $(echo x)'), { isSearch: false, isRead: false, collapsible: false });
  assert.equal(api.isReadOnly('ls -la'), true);
  assert.equal(api.isReadOnly('git status'), true);
  assert.equal(api.isReadOnly('rm -rf build'), false);
  assert.equal(api.isReadOnly('find . -delete'), false);
  assert.equal(api.isReadOnly('echo $(rm x)'), false);
});

test('bad input and bad options are typed errors that run nothing', async () => {
  const dir = tempDir('agent-exec-cc-');
  let asked = 0;
  const t = tools({ cwd: dir, onPermissionRequest: (req) => (asked++, allowAll(req)) });
  // Each well-formed command would leave a file named after its case; a typed error must leave none.
  const touch = (name) => `touch ${path.join(dir, name)}`;
  const cases = [
    [undefined, 'ERR_INVALID_OPTION'],
    [{}, 'ERR_INVALID_COMMAND'],
    [{ command: '   ' }, 'ERR_INVALID_COMMAND'],
    [{ command: 42 }, 'ERR_INVALID_COMMAND'],
    [{ command: touch('timeout-string'), timeout: '10' }, 'ERR_INVALID_OPTION'],
    [{ command: touch('timeout-negative'), timeout: -1 }, 'ERR_INVALID_OPTION'],
    [{ command: touch('timeout-nan'), timeout: Number.NaN }, 'ERR_INVALID_OPTION'],
    [{ command: touch('background-string'), run_in_background: 'yes' }, 'ERR_INVALID_OPTION'],
    [{ command: touch('sandbox-number'), dangerouslyDisableSandbox: 1 }, 'ERR_INVALID_OPTION'],
    [{ command: touch('description-object'), description: {} }, 'ERR_INVALID_OPTION'],
  ];
  for (const [input, code] of cases) {
    const { spawned } = await watchSpawns(() =>
      assert.rejects(t.bash.execute('x', input), (e) => e.code === code && e.message.length > 20, JSON.stringify(input)),
    );
    assert.deepEqual(spawned, [], JSON.stringify(input));
  }
  assert.deepEqual(fs.readdirSync(dir), [], 'a rejected call ran its command');
  assert.equal(asked, 0, 'a rejected call asked for permission');
  await assert.rejects(t.bashOutput.execute('x', { bash_id: 7 }), { code: 'ERR_INVALID_OPTION' });
  await assert.rejects(t.bashOutput.execute('x', { bash_id: 'a', filter: '(' }), { code: 'ERR_INVALID_OPTION' });
  await assert.rejects(t.killShell.execute('x', null), { code: 'ERR_INVALID_OPTION' });
  assert.throws(() => api.createClaudeCodeTools({ timeout: 5 }), { code: 'ERR_INVALID_OPTION', message: /Unknown option "timeout"/ });
  assert.throws(() => api.createClaudeCodeTools({ maxTimeoutMs: -5 }), { code: 'ERR_INVALID_OPTION' });
  assert.throws(() => api.createClaudeCodeTools({ permissions: { allow: 'Bash(ls:*)' } }), { code: 'ERR_INVALID_OPTION' });
  assert.throws(() => api.createClaudeCodeTools({ onPermissionRequest: 'yes' }), { code: 'ERR_INVALID_OPTION' });
  assert.throws(() => api.createClaudeCodeTools({ sandbox: 'on' }), { code: 'ERR_INVALID_OPTION' });
  assert.throws(() => api.createClaudeCodeTools({ cwd: '/nonexistent/dir' }), { code: 'ERR_INVALID_CWD' });
});

test('allow rules hold in the working directories only: a cd elsewhere, then a runner rule, asks', async () => {
  const dir = tempDir('agent-exec-cc-');
  const other = tempDir('agent-exec-cc-other-');
  const canary = path.join(other, 'canary');
  fs.writeFileSync(path.join(other, 'package.json'), JSON.stringify({ name: 'other', version: '1.0.0', scripts: { test: `node -e "require('fs').writeFileSync('${canary}', '')"` } }));
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'mine', version: '1.0.0', scripts: { test: 'node -e 0' } }));
  const requests = [];
  const t = tools({ cwd: dir, permissions: { allow: ['Bash(npm test:*)'] }, onPermissionRequest: (req) => (requests.push(req), 'deny') });
  const mine = await t.bash.execute('1', { command: 'npm test' });
  assert.equal(mine.isError, false, text(mine));
  assert.equal(requests.length, 0);
  const moved = await t.bash.execute('2', { command: `cd ${other}` });
  assert.equal(moved.details.cwd, other, text(moved));
  const r = await t.bash.execute('3', { command: 'npm test' });
  assert.equal(requests.length, 1, 'npm test outside the working directories was not asked');
  assert.match(requests[0].reason, /outside the working directories/);
  assert.equal(r.isError, true);
  assert.equal(fs.existsSync(canary), false);
  // The runner's own options are not covered by its prefix rule either.
  const back = await t.bash.execute('4', { command: `cd ${dir}` });
  assert.equal(back.details.cwd, dir, text(back));
  await t.bash.execute('5', { command: `npm test --script-shell=${path.join(other, 'x.sh')}` });
  assert.equal(requests.length, 2);
  assert.match(requests[1].reason, /--script-shell/);
});

const canSandbox = api.sandboxCapabilities().enforceable && api.sandboxCapabilities().denyRead;

test("Claude Code's Edit and Read permission rules shape the sandbox; other tools' rules are not refused", { skip: !canSandbox && 'this host cannot sandbox with hidden paths' }, async () => {
  const dir = fs.realpathSync(tempDir('agent-exec-cc-'));
  const build = fs.realpathSync(tempDir('agent-exec-cc-build-'));
  fs.writeFileSync(path.join(dir, '.env'), 'SECRET=1');
  fs.writeFileSync(path.join(dir, 'private.txt'), 'private');
  fs.mkdirSync(path.join(dir, '.claude'));
  const settings = {
    permissions: {
      // `//abs` is an absolute path in Claude Code's rules (`/x` is beneath the project).
      allow: ['Bash(cat:*)', 'Bash(tee:*)', `Edit(/${build}/**)`, 'WebFetch(domain:example.com)', 'mcp__github__get_issue', 'Read'],
      deny: ['Edit(./.env)', 'Read(./private.txt)', 'Read(**/*.key)'],
    },
    sandbox: { enabled: true, autoAllowBashIfSandboxed: true },
  };
  fs.writeFileSync(path.join(dir, '.claude', 'settings.json'), JSON.stringify(settings));
  const t = tools({ cwd: dir, settingsFile: '.claude/settings.json', onPermissionRequest: () => 'deny' });
  assert.deepEqual(t.unappliedRules(), ['WebFetch(domain:example.com)', 'mcp__github__get_issue', 'Read', 'Read(**/*.key)']);
  assert.deepEqual(t.rules().allow, ['Bash(cat:*)', 'Bash(tee:*)']);
  const r = await t.bash.execute('1', { command: `echo far | tee ${build}/far.txt; echo over | tee .env; cat private.txt; echo end` });
  assert.match(text(r), /end/);
  assert.equal(fs.readFileSync(path.join(build, 'far.txt'), 'utf8'), 'far\n', 'Edit allow did not make the directory writable');
  assert.equal(fs.readFileSync(path.join(dir, '.env'), 'utf8'), 'SECRET=1', 'Edit deny did not hold');
  assert.doesNotMatch(text(r), /^private$/m, 'Read deny did not hold');
  // Without the rules the same directory is not writable.
  const plain = tools({ cwd: dir, sandbox: { autoAllowBashIfSandboxed: true }, permissions: { allow: ['Bash(tee:*)'] } });
  await plain.bash.execute('2', { command: `echo again | tee ${build}/again.txt` });
  assert.equal(fs.existsSync(path.join(build, 'again.txt')), false);
});

test("Claude Code's sandbox settings, from options or a settings file: filesystem lists, auto-allow, no domain widening", { skip: !canSandbox && 'this host cannot sandbox with hidden paths' }, async () => {
  const dir = fs.realpathSync(tempDir('agent-exec-cc-'));
  const extra = fs.realpathSync(tempDir('agent-exec-cc-extra-'));
  fs.writeFileSync(path.join(dir, '.env'), 'SECRET=1');
  fs.writeFileSync(path.join(dir, 'private.txt'), 'private');
  fs.mkdirSync(path.join(dir, '.claude'));
  const settings = {
    permissions: { deny: ['Bash(rm:*)'] },
    sandbox: {
      enabled: true,
      autoAllowBashIfSandboxed: true,
      allowUnsandboxedCommands: false,
      filesystem: { allowWrite: [extra], denyWrite: ['.env'], denyRead: ['private.txt'] },
    },
  };
  fs.writeFileSync(path.join(dir, '.claude', 'settings.json'), JSON.stringify(settings));
  let asked = 0;
  const t = tools({ cwd: dir, settingsFile: '.claude/settings.json', onPermissionRequest: () => (asked++, 'deny') });
  // Sandboxed and auto-allowed: a writing command runs unasked, where the settings let it write
  // (with a deny rule, each segment is checked: written so the analyzer reads it).
  const r = await t.bash.execute('1', { command: `echo made | tee made.txt; echo far | tee ${extra}/far.txt; echo over | tee .env; cat private.txt; echo end` });
  assert.equal(asked, 0, 'a sandboxed command was asked');
  assert.match(text(r), /end/);
  assert.equal(fs.readFileSync(path.join(dir, 'made.txt'), 'utf8'), 'made\n');
  assert.equal(fs.readFileSync(path.join(extra, 'far.txt'), 'utf8'), 'far\n');
  assert.equal(fs.readFileSync(path.join(dir, '.env'), 'utf8'), 'SECRET=1', 'denyWrite did not hold');
  assert.doesNotMatch(text(r), /^private$/m, 'denyRead did not hold');
  // Deny rules still apply to sandboxed commands, and the model cannot leave the sandbox.
  fs.writeFileSync(path.join(dir, 'keep'), 'x');
  const rm = await t.bash.execute('2', { command: 'rm keep' });
  assert.equal(rm.isError, true);
  assert.ok(fs.existsSync(path.join(dir, 'keep')));
  const out = await t.bash.execute('3', { command: 'touch /tmp/agent-exec-cc-outside', dangerouslyDisableSandbox: true });
  assert.equal(out.isError, true);
  assert.equal(fs.existsSync('/tmp/agent-exec-cc-outside'), false);
  // Without deny or ask rules there is nothing to check: any sandboxed command runs unasked.
  const free = tools({ cwd: dir, sandbox: { autoAllowBashIfSandboxed: true, denyWrite: ['.env'] }, onPermissionRequest: () => (asked++, 'deny') });
  const redirect = await free.bash.execute('5', { command: 'echo $(echo redirected) > r.txt; echo over > .env' });
  assert.equal(asked, 0, text(redirect));
  assert.equal(fs.readFileSync(path.join(dir, 'r.txt'), 'utf8'), 'redirected\n');
  assert.equal(fs.readFileSync(path.join(dir, '.env'), 'utf8'), 'SECRET=1');
  // A list of allowed domains is the network by domain (the names only), never the whole network.
  const net = tools({ cwd: dir, sandbox: { network: { allowedDomains: ['allowed.localhost'] } }, permissions: { allow: ['Bash(curl:*)'] } });
  const refused = await net.bash.execute('6', { command: 'curl -s --max-time 5 http://blocked.localhost:9/' });
  assert.match(text(refused), /agent-exec sandbox: blocked\.localhost:9: not in the allowed domains/);
  // srt's own settings file: network and filesystem at the top.
  fs.writeFileSync(path.join(dir, 'srt.json'), JSON.stringify({ filesystem: { denyRead: ['private.txt'], allowWrite: [], denyWrite: [] }, network: { allowedDomains: [] } }));
  const srt = tools({ cwd: dir, settingsFile: 'srt.json', permissions: { allow: ['Bash(cat:*)'] } });
  const read = await srt.bash.execute('4', { command: 'cat private.txt' });
  assert.doesNotMatch(text(read), /^private$/m);
  assert.throws(() => api.createClaudeCodeTools({ cwd: dir, settingsFile: 'missing.json' }), { code: 'ERR_INVALID_OPTION', message: /settingsFile .*missing\.json cannot be read/ });
});

const noCurlHere = require('node:child_process').spawnSync('curl', ['--version']).status !== 0 && 'curl is not installed';

test('a network name outside the sandbox is asked; "don\'t ask again" allows it from then on', { skip: (!caps.networkByDomain && 'no network by domain here') || noCurlHere }, async (t) => {
  const http = require('node:http');
  const seen = [];
  const server = http.createServer((req, res) => {
    seen.push(`${req.headers.host}${req.url}`);
    res.end('reached\n');
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => new Promise((r) => server.close(r)));
  const port = server.address().port;
  const asked = [];
  const kept = [];
  let answer = 'deny';
  const tt = tools({
    sandbox: { network: { allowedDomains: [], allowLocalhost: [port] } },
    permissions: { allow: ['Bash(curl:*)'] },
    onNetworkRequest: (req) => (asked.push(req), answer),
    onDomainsAllowed: (hosts) => kept.push(...hosts),
  });
  const get = (name, id) => tt.bash.execute(id, { command: `curl -s --max-time 10 http://${name}.localhost:${port}/${id}` });
  // No: refused, nothing reached.
  const no = await get('api', 'a');
  assert.doesNotMatch(text(no), /reached/);
  assert.equal(asked.length, 1);
  assert.deepEqual({ host: asked[0].host, port: asked[0].port, toolUseId: asked[0].toolUseId }, { host: 'api.localhost', port, toolUseId: 'a' });
  assert.match(asked[0].command, /^curl /);
  // Yes, and don't ask again: reached now, and later without asking.
  answer = 'allow-always';
  assert.match(text(await get('api', 'b')), /reached/);
  assert.deepEqual(kept, ['api.localhost']);
  answer = 'deny';
  assert.match(text(await get('api', 'c')), /reached/);
  assert.equal(asked.length, 2, 'asked again after "don\'t ask again"');
  // Another name is still asked (and refused).
  assert.doesNotMatch(text(await get('other', 'd')), /reached/);
  assert.equal(asked.length, 3);
  assert.deepEqual(seen, [`api.localhost:${port}/b`, `api.localhost:${port}/c`]);
});
