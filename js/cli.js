#!/usr/bin/env node
'use strict';
// The agent-exec command: try the runtime from a terminal.

const path = require('node:path');
const os = require('node:os');
const fs = require('node:fs');

const USAGE = `Usage:
  agent-exec run [options] [--] <command...>   run a command and print its outcome
  agent-exec check [options] [--] <command...> analyse a command and show the approval decision
  agent-exec sandbox [--json]                  what this host's sandbox can enforce
  agent-exec mcp [options]                     a stdio MCP server over the runtime (mcp --help)
  agent-exec demo                              run a few commands that show what the runtime does
  agent-exec help                              this text (also: <command> --help)
  agent-exec --version                         the package version

Options for run:
  --cwd <dir>           working directory
  --timeout <seconds>   total lifetime (default 1800, 0 = none)
  --grace <ms>          SIGTERM to SIGKILL grace (default 3000)
  --max-output <chars>  cap of the aggregated output (default 200000)
  --stdin-pipe          forward this terminal's stdin to the command, closed at its end (default: closed)
  --pty                 run on a pseudo-terminal
  --sandbox             run sandboxed: writes only under the cwd and a private temp dir, no network
  --writable <dir>      a writable root of the sandbox (repeatable; replaces the cwd; implies --sandbox)
  --network             let the sandbox use the network
  --unix-socket <path>  a Unix socket (or directory of them) the sandbox may connect to (repeatable)
  --deny-read <path>    a file or directory the sandbox may not read (repeatable; ~/.ssh, ~/.aws and
                        other credential locations are hidden by default)
  --allow-read <path>   a path brought back inside a hidden one (repeatable, e.g. ~/.ssh/known_hosts)
  --deny-write <path|glob>  read-only inside the writable roots (repeatable, e.g. .env, 'secrets/**')
  --allow-domain <host>  the network by domain (repeatable; example.com or '*.example.com'): HTTP,
                        HTTPS and SOCKS5 through the sandbox's proxy to those names only
  --deny-domain <host>  refused even where --allow-domain matches (repeatable)
  --memory <MiB>  --cpu <seconds>  --processes <n>   sandbox limits (imply --sandbox)
  --json                print the outcome as JSON instead of text

Options for check:
  --security <deny|allowlist|full>   --ask <off|on-miss|always>   --agent <id>
  --approvals-file <path>            --cwd <dir>                  --json
`;

class UsageError extends Error {}

const { parseArgs } = require('node:util');

const RUN_OPTIONS = {
  cwd: { type: 'string' },
  timeout: { type: 'string' },
  grace: { type: 'string' },
  'max-output': { type: 'string' },
  'stdin-pipe': { type: 'boolean' },
  pty: { type: 'boolean' },
  sandbox: { type: 'boolean' },
  writable: { type: 'string', multiple: true },
  network: { type: 'boolean' },
  'unix-socket': { type: 'string', multiple: true },
  'deny-read': { type: 'string', multiple: true },
  'allow-read': { type: 'string', multiple: true },
  'deny-write': { type: 'string', multiple: true },
  'allow-domain': { type: 'string', multiple: true },
  'deny-domain': { type: 'string', multiple: true },
  memory: { type: 'string' },
  cpu: { type: 'string' },
  processes: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
};

/** node:util's parseArgs, with its errors as usage errors that name the option. */
function parse(args, options) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError(e.message.replace(/^Unknown option '([^']+)'.*$/s, 'unknown option $1'));
  }
}

function number(name, v) {
  const n = Number(v);
  if (v === undefined) return undefined;
  if (v === '' || !Number.isFinite(n) || n < 0) throw new UsageError(`--${name} needs a number of at least 0, got "${v}"`);
  return n;
}

function parseRun(args) {
  const { values: v, positionals } = parse(args, RUN_OPTIONS);
  const opts = { json: v.json === true, help: v.help === true, request: {} };
  if (opts.help) return opts;
  const r = opts.request;
  if (v.cwd !== undefined) r.cwd = v.cwd;
  if (v.timeout !== undefined) r.timeoutMs = number('timeout', v.timeout) * 1000;
  if (v.grace !== undefined) r.killGraceMs = number('grace', v.grace);
  if (v['max-output'] !== undefined) r.maxOutputChars = number('max-output', v['max-output']);
  if (v['stdin-pipe']) r.stdin = 'pipe';
  if (v.pty) r.pty = true;
  const sandbox = () => (r.sandbox ??= {});
  const limits = () => (sandbox().limits ??= {});
  if (v.sandbox) sandbox();
  if (v.network) sandbox().network = true;
  if (v.writable) sandbox().writableRoots = v.writable.map((d) => path.resolve(d));
  if (v['unix-socket']) sandbox().unixSockets = v['unix-socket'].map((d) => path.resolve(d));
  // Paths as given: the runtime reads ~ and resolves relative ones against the cwd (denyWrite: each root).
  if (v['deny-read']) sandbox().denyRead = v['deny-read'];
  if (v['allow-read']) sandbox().allowRead = v['allow-read'];
  if (v['deny-write']) sandbox().denyWrite = v['deny-write'];
  if (v['allow-domain'] || v['deny-domain']) {
    if (v.network) throw new UsageError('--network opens every host; --allow-domain opens only the names given: use one of them');
    sandbox().network = { allow: v['allow-domain'] ?? [], deny: v['deny-domain'] ?? [] };
  }
  if (v.memory !== undefined) limits().memoryBytes = Math.round(number('memory', v.memory) * 1048576);
  if (v.cpu !== undefined) limits().cpuSeconds = number('cpu', v.cpu);
  if (v.processes !== undefined) limits().processes = number('processes', v.processes);
  if (positionals.length === 0) throw new UsageError('run needs a command');
  r.command = positionals.join(' ');
  return opts;
}

function describe(outcome) {
  const lines = [];
  const how = outcome.exitSignal
    ? `signal ${outcome.exitSignal}`
    : `exit code ${outcome.exitCode ?? 'n/a'}`;
  lines.push(`[${outcome.status}] ${how} in ${outcome.durationMs} ms (session ${outcome.sessionId}, pid ${outcome.pid})`);
  if (outcome.reason) lines.push(`reason: ${outcome.reason}`);
  if (outcome.truncated) {
    lines.push(`output cut: ${outcome.omittedChars} of ${outcome.totalChars} chars omitted; full log: ${outcome.outputFile}`);
  }
  for (const w of outcome.warnings) lines.push(w);
  if (outcome.sandbox) {
    const s = outcome.sandbox;
    const sockets = s.unixSockets.length ? `; unix sockets ${s.unixSockets.join(', ')}` : '';
    lines.push(`sandbox: writable ${s.writableRoots.join(', ')}; network ${s.network ? 'on' : s.mechanisms.some((m) => m.startsWith('network by domain')) ? 'by domain' : 'off'}${sockets}; ${s.mechanisms.join(', ')}`);
    for (const d of s.denials) {
      const what = d.path ? `${d.operation} ${d.path}` : d.operation;
      lines.push(`  refused: ${what}: ${d.rule} (${d.detail}, pid ${d.pid}${d.count > 1 ? `, ${d.count} times` : ''})`);
    }
    if (s.limitMessage) lines.push(`  limit: ${s.limitMessage}`);
  }
  return lines.join('\n');
}

function sandboxInfo(args, out = process.stdout) {
  const { sandboxCapabilities } = require('./index.js');
  const caps = sandboxCapabilities();
  if (args.includes('--json')) {
    out.write(JSON.stringify(caps, null, 2) + '\n');
  } else {
    const lines = [`platform: ${caps.platform}`, `enforceable: ${caps.enforceable ? 'yes' : 'no'}`];
    for (const p of caps.problems) lines.push(`  problem: ${p}`);
    lines.push(`landlock ABI: ${caps.landlockAbi}`, `seccomp supervisor: ${caps.seccomp ? 'yes' : 'no'}`);
    const yes = (v) => (v ? 'yes' : 'no');
    lines.push(`user namespaces: ${yes(caps.userNamespaces)}; read-only binds: ${yes(caps.readOnlyBinds)}; read-only mounts outside the roots: ${yes(caps.readOnlyMounts)}`);
    lines.push(`hidden from reads (credentials by default, --deny-read): ${caps.denyRead ? 'yes (mount namespace)' : 'no: no mount namespace here'}`);
    lines.push(`network by domain (--allow-domain): ${caps.networkByDomain ? 'yes (the run\'s own proxy; other connections refused)' : 'no'}`);
    lines.push(`cgroup: ${caps.cgroupVersion ? `v${caps.cgroupVersion}` : 'none writable'}`);
    for (const [k, v] of Object.entries(caps.limits)) lines.push(`limit ${k}: ${v ?? 'not enforceable here'}`);
    out.write(lines.join('\n') + '\n');
  }
  return caps.enforceable ? 0 : 1;
}

async function run(args, out = process.stdout, input = process.stdin) {
  const { exec, writeStdin, pollSession } = require('./index.js');
  const opts = parseRun(args);
  if (opts.help) {
    out.write(USAGE);
    return 0;
  }
  const ac = new AbortController();
  const onSigint = () => ac.abort();
  process.once('SIGINT', onSigint);
  try {
    const onOutput = opts.json ? undefined : (chunk) => out.write(chunk.text);
    let outcome;
    if (opts.request.stdin === 'pipe') {
      // The command reads this process's stdin: start it, forward every byte, close at our EOF.
      const t0 = Date.now();
      const started = await exec({ ...opts.request, background: true, onOutput });
      const id = started.sessionId;
      ac.signal.addEventListener('abort', () => require('./index.js').killSession(id).catch(() => {}));
      const forwarded = forwardStdin(input, (data, eof) => writeStdin(id, data, { eof }));
      let polled;
      do polled = await pollSession(id, { timeoutMs: 120000 });
      while (!polled.exited);
      await forwarded.stop();
      outcome = { ...started, ...polled, status: polled.status, durationMs: Date.now() - t0, warnings: started.warnings };
    } else {
      outcome = await exec({ ...opts.request, signal: ac.signal, onOutput });
    }
    if (opts.json) out.write(JSON.stringify(outcome, null, 2) + '\n');
    else out.write((outcome.output.endsWith('\n') || outcome.output === '' ? '' : '\n') + describe(outcome) + '\n');
    if (outcome.timedOut) return 124;
    if (outcome.exitSignal) return 128 + (os.constants.signals[outcome.exitSignal] ?? 0);
    return outcome.exitCode ?? 1;
  } finally {
    process.removeListener('SIGINT', onSigint);
  }
}

/** Copy `input` to `write(data, eof)` in order; `stop()` ends the copy (the command exited). */
function forwardStdin(input, write) {
  let chain = Promise.resolve();
  let stopped = false;
  const send = (data, eof) => {
    chain = chain.then(() => (stopped ? undefined : write(data, eof).catch(() => {})));
  };
  const onData = (d) => send(d, false);
  const onEnd = () => send('', true);
  input.on('data', onData);
  input.once('end', onEnd);
  input.resume?.();
  return {
    async stop() {
      stopped = true;
      input.off('data', onData);
      input.off('end', onEnd);
      input.pause?.();
      input.unref?.();
      await chain;
    },
  };
}

function parseCheck(args) {
  const { values: v, positionals } = parse(args, {
    security: { type: 'string' },
    ask: { type: 'string' },
    agent: { type: 'string' },
    'approvals-file': { type: 'string' },
    cwd: { type: 'string' },
    json: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  });
  const opts = { json: v.json === true, help: v.help === true, options: {} };
  if (opts.help) return opts;
  if (v.security !== undefined) opts.options.security = v.security;
  if (v.ask !== undefined) opts.options.ask = v.ask;
  if (v.agent !== undefined) opts.options.agentId = v.agent;
  if (v['approvals-file'] !== undefined) opts.options.approvalsFile = v['approvals-file'];
  if (v.cwd !== undefined) opts.options.cwd = v.cwd;
  if (positionals.length === 0) throw new UsageError('check needs a command');
  opts.command = positionals.join(' ');
  return opts;
}

function check(args, out = process.stdout) {
  const { evaluateCommand, classifyCommand } = require('./index.js');
  const opts = parseCheck(args);
  if (opts.help) {
    out.write(USAGE);
    return 0;
  }
  const ev = evaluateCommand(opts.command, opts.options);
  const cls = classifyCommand(opts.command, { cwd: opts.options.cwd });
  if (opts.json) {
    out.write(JSON.stringify({ ...ev, classification: cls }, null, 2) + '\n');
  } else {
    const lines = [`command: ${opts.command}`];
    lines.push(`analysis: ${ev.analysisOk ? 'ok' : `failed (${ev.analysis.reason})`}`);
    const segments = ev.analysis.chains.flat();
    segments.forEach((s, i) => {
      const v = ev.segments[i] || {};
      const how = v.satisfiedBy ? `allowed by ${v.satisfiedBy}${v.pattern ? ` ${v.pattern}` : ''}` : `not allowed: ${v.miss}`;
      lines.push(`  [${i + 1}] ${JSON.stringify(s.argv)} -> ${s.resolvedPath ?? '(unresolved)'}${s.wrappers.length ? ` (wrappers: ${s.wrappers.join(', ')})` : ''}; ${how}`);
    });
    lines.push(
      `classification: ${cls.segments.map((s) => s.kind).join(', ') || 'none'}; ` +
        `${cls.isReadOnly ? 'read-only' : 'not read-only'}${cls.isSearchOrRead ? ', search/read' : ''} (${cls.reasons.join('; ')})`,
    );
    lines.push(`policy: security=${ev.security} ask=${ev.ask} askFallback=${ev.askFallback} (agent ${ev.agentId}, ${ev.approvalsFile})`);
    lines.push(`decision: ${ev.decision} (${ev.reason})`);
    out.write(lines.join('\n') + '\n');
  }
  return ev.decision === 'allow' ? 0 : ev.decision === 'ask' ? 3 : 4;
}

async function demo(out = process.stdout) {
  const { exec } = require('./index.js');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-exec-demo-'));
  const steps = [
    ['stdout and stderr read apart, merged as they arrive', { command: 'echo "to stdout"; sleep 0.05; echo "to stderr" >&2; sleep 0.05; echo "stdout again"' }],
    ['a non-zero exit is a result, not an exception', { command: 'ls /nonexistent-dir' }],
    ['127: command not found is a failure', { command: 'definitely-not-a-command-xyz' }],
    ['ANSI colours and progress redraws come out clean', { command: 'printf "\\033[32mgreen\\033[0m\\n"; for p in 10 50 100; do printf "\\r%s%%" $p; done; echo' }],
    ['a timeout ends the whole pipeline (SIGTERM, then SIGKILL)', { command: 'sleep 30 | sleep 31 | cat', timeoutMs: 500, killGraceMs: 500 }],
    ['stdin is closed: cat returns at once instead of hanging', { command: 'cat; echo "cat saw EOF"' }],
    // Shown as the tools show it: head and tail cut at line boundaries, the full log named.
    ['big output keeps its head and tail; the full log goes to a file', { command: 'seq 1 100000', logAboveChars: 200 }, { showChars: 200 }],
    ['a background child holding the pipes does not hang the call', { command: 'sleep 30 & echo started', drainTimeoutMs: 300 }],
  ];
  if (require('./index.js').sandboxCapabilities().enforceable) {
    steps.push([
      'in the sandbox, writes outside the cwd and the network are refused, and each refusal is named',
      { command: 'echo ok > inside.txt && cat inside.txt; echo no > ~/agent-exec-demo-outside.txt; exec 3<>/dev/tcp/127.0.0.1/9', sandbox: true },
    ]);
  }
  const { budgetText } = require('./tools/shared.js');
  for (const [title, request, { showChars } = {}] of steps) {
    out.write(`\n$ ${request.command}\n# ${title}\n`);
    const outcome = await exec({ cwd: dir, ...request });
    const shown = showChars ? budgetText(outcome.output, showChars, outcome) : outcome.output;
    if (shown) out.write(shown.endsWith('\n') ? shown : shown + '\n');
    out.write(describe(outcome) + '\n');
    for (const pid of outcome.leftRunning) {
      try {
        process.kill(pid, 'SIGKILL');
        out.write(`(the demo ended the leftover process ${pid})\n`);
      } catch {
        // Already gone.
      }
    }
  }
  fs.rmSync(dir, { recursive: true, force: true });
  return 0;
}

/** The stdio MCP server; stdout belongs to the protocol, so every message goes to stderr. */
async function mcp(args) {
  const { readServerConfig, ConfigError, USAGE: MCP_USAGE } = require('./mcp/config.js');
  let config;
  try {
    config = readServerConfig(args);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    process.stderr.write(`agent-exec mcp: ${e.message}\n\n${MCP_USAGE}`);
    return 2;
  }
  if (config.help) {
    process.stdout.write(config.help);
    return 0;
  }
  const code = await require('./mcp/server.js').serveStdio(config);
  // Stdin or a signal ended the server and its sessions are gone: nothing else should keep it alive.
  process.exit(code);
}

async function main(argv) {
  const [cmd, ...rest] = argv;
  try {
    if (cmd === 'run') return await run(rest);
    if (cmd === 'demo') return await demo();
    if (cmd === 'check') return check(rest);
    if (cmd === 'sandbox') return sandboxInfo(rest);
    if (cmd === 'mcp') return await mcp(rest);
    if (cmd === '--version' || cmd === '-V' || cmd === 'version') {
      process.stdout.write(`agent-exec ${require('../package.json').version}\n`);
      return 0;
    }
    if (cmd === undefined || cmd === 'help' || cmd === '--help' || cmd === '-h') {
      process.stdout.write(USAGE);
      return cmd === undefined ? 2 : 0;
    }
    throw new UsageError(`unknown command "${cmd}"`);
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`agent-exec: ${e.message}\n\n${USAGE}`);
      return 2;
    }
    process.stderr.write(`agent-exec: ${e.code ? `[${e.code}] ` : ''}${e.message}\n`);
    return 1;
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}

module.exports = { main, parseRun, parseCheck, describe, sandboxInfo };
