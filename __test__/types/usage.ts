// Type check of the public .d.ts files: compiled with `tsc --noEmit`, never run.
import { exec } from '../../js/index';
import type { ExecOptions, ExecOutcome, ExitInfo, OutputChunk } from '../../js/index';

async function main(): Promise<void> {
  const ac = new AbortController();
  const options: ExecOptions = {
    command: 'ls -la',
    cwd: '/tmp',
    env: { FOO: 'bar' },
    inheritEnv: true,
    timeoutMs: 5000,
    killGraceMs: 1000,
    stdin: 'closed',
    maxOutputChars: 10000,
    signal: ac.signal,
    onOutput: (chunk: OutputChunk) => {
      const s: 'stdout' | 'stderr' = chunk.stream;
      void s;
    },
    onExit: (info: ExitInfo) => {
      const code: number | undefined = info.exitCode;
      void code;
    },
  };
  const outcome: ExecOutcome = await exec(options);
  const status: 'completed' | 'failed' | 'running' = outcome.status;
  const file: string | undefined = outcome.outputFile;
  const pids: number[] = outcome.leftRunning;
  void status;
  void file;
  void pids;
  // @ts-expect-error command is required
  await exec({ cwd: '/tmp' });
}

void main;

import {
  analyzeCommand,
  evaluateCommand,
  listSessions,
  getSession,
  pollSession,
  sendKeys,
} from '../../js/index';
import type { ApprovalRequest, CommandAnalysis, CommandEvaluation, SessionInfo } from '../../js/index';

async function approvals(): Promise<void> {
  const analysis: CommandAnalysis = analyzeCommand('ls && pwd', { cwd: '/tmp' });
  const first: string[] = analysis.chains[0][0].argv;
  const ev: CommandEvaluation = evaluateCommand('ls', { security: 'allowlist', ask: 'on-miss' });
  const decision: 'allow' | 'deny' | 'ask' = ev.decision;
  const outcome = await exec({
    command: 'ls',
    approval: {
      security: 'allowlist',
      ask: 'on-miss',
      onApproval: async (req: ApprovalRequest) => (req.resolvedPaths.length > 0 && !req.allowAlways.withheld ? 'allow-once' : 'deny'),
    },
  });
  const allowed: boolean | undefined = outcome.approval?.allowed;
  const sessions: ReadonlyArray<Readonly<SessionInfo>> = listSessions({ scopeKey: 'a' });
  const one: SessionInfo | null = getSession('calm-harbor', { scopeKey: 'a' });
  // @ts-expect-error listed sessions are frozen snapshots
  sessions[0].tail = 'edited';
  const polled = await pollSession('calm-harbor', { timeoutMs: 1000 });
  const keys = await sendKeys('calm-harbor', { keys: ['C-c'] });
  void first;
  void decision;
  void allowed;
  void sessions;
  void one;
  void polled.stdout;
  void keys.warnings;
}

void approvals;

import { createBashTools } from '../../js/index';
import type { ExecDetails, ToolResult } from '../../js/index';

async function tools(): Promise<void> {
  const { exec, process: proc } = createBashTools({ scopeKey: 'agent:main', security: 'allowlist', onApproval: async () => 'allow-once' as const });
  const r: ToolResult<ExecDetails> = await exec.execute('call-1', { command: 'ls', yieldMs: 1000 }, undefined, (u) => {
    void u.details.tail;
  });
  if (r.details.status === 'running') {
    const p = await proc.execute('call-2', { action: 'poll', sessionId: r.details.sessionId, timeout: 5000 });
    void p.content[0].text;
    const follow: string | undefined = r.details.followUp;
    void follow;
  }
  if (r.details.status === 'failed') {
    const kind: 'overall-timeout' | 'signal' | 'aborted' | string | undefined = r.details.failureKind;
    void kind;
  }
  const april = createBashTools({ profile: 'openclaw-2026-04', inputWaitIdleMs: 5000 });
  void april;
}

void tools;

import { sandboxCapabilities, createExecTool } from '../../js/index';
import type { SandboxCapabilities, SandboxDenial, SandboxOptions, SandboxReport } from '../../js/index';

async function sandboxes(): Promise<void> {
  const caps: SandboxCapabilities = sandboxCapabilities();
  const abi: number = caps.landlockAbi;
  const memory: 'cgroup' | 'rlimit-data' | undefined = caps.limits.memoryBytes;
  const sandbox: SandboxOptions = { writableRoots: ['/tmp'], network: false, unixSockets: ['/run/user/1000/ssh-agent.sock'], limits: { memoryBytes: 1 << 28, processes: 64 } };
  const r = await exec({ command: 'make', sandbox });
  const report: SandboxReport | undefined = r.sandbox;
  const denials: SandboxDenial[] = report?.denials ?? [];
  const limit: 'cpu' | 'memory' | 'processes' | 'fileSize' | undefined = report?.limitExceeded;
  await exec({ command: 'true', sandbox: true });
  const sockets: string[] = r.sandbox?.unixSockets ?? [];
  void sockets;
  // @ts-expect-error unixSockets is an array of paths
  await exec({ command: 'true', sandbox: { unixSockets: '/run/x.sock' } });
  // @ts-expect-error network is a boolean
  await exec({ command: 'true', sandbox: { network: 'on' } });
  const tool = createExecTool({ sandbox: { network: false } });
  const result = await tool.execute('1', { command: 'ls', host: 'sandbox' });
  if (result.details.status === 'completed') {
    const refused: SandboxDenial[] | undefined = result.details.sandbox?.denials;
    void refused;
  }
  void abi;
  void memory;
  void denials;
  void limit;
}

void sandboxes;

import { trackedCwd } from '../../js/index';

function tracking(): void {
  const dir: string | null = trackedCwd('agent:main');
  const tool = createExecTool({ trackCwd: true, scopeKey: 'agent:main' });
  void dir;
  void tool;
}

void tracking;

import { createClaudeCodeTools, isReadOnly, isSearchOrReadCommand } from '../../js/index';
import type { BashProgress, PermissionRequest } from '../../js/index';

async function claudeCode(): Promise<void> {
  const t = createClaudeCodeTools({
    cwd: '/tmp',
    permissions: { allow: ['Bash(npm test:*)'], deny: ['Bash(rm:*)'] },
    onPermissionRequest: async (req: PermissionRequest) => (req.suggestions.length ? 'allow-always' : 'deny'),
    sandbox: { excludedCommands: ['docker'], allowUnsandboxedCommands: false, network: false },
    onProgress: (p: BashProgress) => void p.lastLines,
  });
  const r = await t.bash.execute('1', { command: 'npm test', timeout: 60000, description: 'Run the tests' });
  const id: string | undefined = r.details.backgroundId;
  if (id) {
    const out = await t.bashOutput.execute('2', { bash_id: id, filter: 'FAIL' });
    const status: string = out.details.status;
    void status;
    await t.killShell.execute('3', { shell_id: id });
  }
  const isError: boolean = r.isError;
  const fold: boolean = isSearchOrReadCommand('grep x .').collapsible && isReadOnly('ls');
  // @ts-expect-error timeout is milliseconds as a number
  await t.bash.execute('4', { command: 'ls', timeout: '10' });
  // @ts-expect-error run_in_background is a boolean
  await t.bash.execute('5', { command: 'ls', run_in_background: 'yes' });
  // @ts-expect-error the sandbox policy has no such field
  createClaudeCodeTools({ sandbox: { excluded: ['docker'] } });
  void isError;
  void fold;
  await t.dispose();
}

void claudeCode;
