// Types of the OpenClaw-compatible tools (hand-written; checked by tsc in CI).
import type { ApprovalRequest, ContainerHost, SandboxDenial, SandboxOptions } from '../../index';

export interface TextContent {
  type: 'text';
  text: string;
}

export interface ToolResult<D = Record<string, unknown>> {
  content: TextContent[];
  details: D;
}

export type ToolUpdate = (update: ToolResult<ExecRunningDetails>) => void;

export interface AgentTool<P, D = Record<string, unknown>> {
  name: string;
  label: string;
  readonly description: string;
  /** JSON Schema of the parameters. */
  parameters: Record<string, unknown>;
  execute(toolCallId: string, params: P, signal?: AbortSignal, onUpdate?: ToolUpdate): Promise<ToolResult<D>>;
}

export interface ExecParams {
  command: string;
  workdir?: string;
  env?: Record<string, string>;
  yieldMs?: number;
  background?: boolean;
  /** Seconds; 0 disables; default 1800. */
  timeout?: number;
  pty?: boolean;
  elevated?: boolean;
  host?: 'auto' | 'sandbox' | 'gateway' | 'node' | string;
  security?: 'deny' | 'allowlist' | 'full' | string;
  ask?: 'off' | 'on-miss' | 'always' | string;
  node?: string;
}

/** For runs in agent-exec's sandbox (host=sandbox): what it refused and which limit ended the run. */
export interface ExecSandboxDetails {
  denials: SandboxDenial[];
  limitExceeded?: 'cpu' | 'memory' | 'processes' | 'fileSize';
  limitMessage?: string;
  tmpDir: string;
}

/** How a run ended (the default profile; later OpenClaw's names). agent-exec has no no-output timeout. */
export type ExecExitReason = 'exit' | 'signal' | 'overall-timeout' | 'manual-cancel' | 'spawn-error';
export type ExecFailureKind =
  | 'shell-command-not-found'
  | 'shell-not-executable'
  | 'overall-timeout'
  | 'signal'
  | 'aborted'
  | 'runtime-error';

export interface ExecCompletedDetails {
  status: 'completed';
  exitCode: number;
  /** Default profile only (absent under `openclaw-2026-04` and `clawdis`). */
  exitSignal?: string | null;
  exitReason?: ExecExitReason;
  noOutputTimedOut?: false;
  durationMs: number;
  aggregated: string;
  cwd: string;
  outputFile?: string;
  sandbox?: ExecSandboxDetails;
  /**
   * A run the approval gate let through on analysis alone (a safe bin): `read-only-sandbox` where it
   * ran confined, `analysis-only` where this host cannot make a sandbox.
   */
  confinement?: 'read-only-sandbox' | 'analysis-only';
  /** With trackCwd: where the run ended, when it moved. */
  finalCwd?: string;
}

export interface ExecFailedDetails {
  status: 'failed';
  exitCode: number | null;
  /** Default profile only; a workdir that is not a directory gives `runtime-error` and nothing ran. */
  exitSignal?: string | null;
  exitReason?: ExecExitReason;
  failureKind?: ExecFailureKind;
  noOutputTimedOut?: false;
  durationMs: number;
  aggregated: string;
  timedOut: boolean;
  cwd: string;
  outputFile?: string;
  sandbox?: ExecSandboxDetails;
  /**
   * A run the approval gate let through on analysis alone (a safe bin): `read-only-sandbox` where it
   * ran confined, `analysis-only` where this host cannot make a sandbox.
   */
  confinement?: 'read-only-sandbox' | 'analysis-only';
  /** With trackCwd: where the run ended, when it moved. */
  finalCwd?: string;
}

export interface ExecRunningDetails {
  status: 'running';
  sessionId: string;
  pid?: number;
  startedAt: number;
  cwd: string;
  tail: string;
  /** Default profile: what to do next (the process actions; when notifyOnExit is false, that no wake comes). */
  followUp?: string;
}

export interface ExecApprovalPendingDetails {
  status: 'approval-pending';
  approvalId: string;
  approvalSlug: string;
  expiresAtMs: number;
  host: 'gateway' | 'node';
  command: string;
  cwd: string;
  allowedDecisions: Array<'allow-once' | 'allow-always' | 'deny'>;
  warningText?: string;
}

/**
 * Default profile: an approval was needed and there is no `onApproval` to ask (and no `deferApprovals`):
 * nothing ran. (`openclaw-2026-04`: askFallback decides instead, deny by default.)
 */
export interface ExecApprovalUnavailableDetails {
  status: 'approval-unavailable';
  reason: 'no-approval-route';
  sentApproverDms: false;
  host: 'gateway';
  command: string;
  cwd: string;
  warningText?: string;
}

export type ExecDetails =
  | ExecCompletedDetails
  | ExecFailedDetails
  | ExecRunningDetails
  | ExecApprovalPendingDetails
  | ExecApprovalUnavailableDetails;

export interface ProcessParams {
  /** Anything else is refused with "Invalid process action. Expected one of: ..." (default profile). */
  action: 'list' | 'poll' | 'log' | 'write' | 'send-keys' | 'submit' | 'paste' | 'kill' | 'clear' | 'remove' | 'screen' | string;
  sessionId?: string;
  data?: string;
  keys?: string[];
  hex?: string[];
  literal?: string;
  text?: string;
  bracketed?: boolean;
  eof?: boolean;
  offset?: number;
  limit?: number;
  /**
   * For poll: wait up to this many ms for new output or the exit (default profile: 0..30000, back as
   * soon as unread output is there; `openclaw-2026-04`: 0..120000, until the exit).
   */
  timeout?: number | string;
}

/** Where a run event came from and where it goes back to. */
export interface SystemEventContext {
  sessionKey?: string;
  contextKey?: string;
  command?: string;
  trusted: false;
  /** The chat the command came from: `channel` (messageProvider), `to` (currentChannelId), `accountId`, `threadId` (currentThreadTs). */
  deliveryContext?: { channel?: string; to?: string; accountId?: string; threadId?: string };
}

export interface BashToolDefaults {
  /**
   * `openclaw` (default): OpenClaw's tools as of August-September 2026 (checks before anything spawns,
   * timeout texts and `exitReason`/`failureKind`, input-wait detection, the 30 s poll that returns on
   * output, the action list). `openclaw-2026-04`: B's (April 2026) texts and behaviour where they differ.
   * `clawdis`: the January 2026 Clawdis docs' tool, named `bash`, with a 20000 ms default yield, A's
   * description and A's pending cap (200000 chars per stream), and B's texts.
   */
  profile?: 'openclaw' | 'openclaw-2026-04' | 'clawdis';
  /**
   * Process tool: a running session with writable input and no output for this long is said to wait for
   * input (`waitingForInput`, ` [input-wait]`, a hint in poll and log). Default
   * `OPENCLAW_PROCESS_INPUT_WAIT_IDLE_MS`, else 15000; clamped 1000..600000.
   */
  inputWaitIdleMs?: number;
  /**
   * Most characters of output in a result's text (1000..200000, default 30000, or
   * `AGENT_EXEC_MAX_TEXT_CHARS`): head and tail, with a marker naming the file that holds everything.
   * `details.aggregated` keeps OpenClaw's cap (`PI_BASH_MAX_OUTPUT_CHARS`, 200000).
   */
  maxTextChars?: number;
  cwd?: string;
  /** auto (default): the sandbox when `sandbox` is set, else the gateway (this machine). */
  host?: 'auto' | 'sandbox' | 'gateway' | 'node';
  /**
   * agent-exec's native sandbox as OpenClaw's sandbox runtime: with it, host=auto and host=sandbox run
   * sandboxed (and skip exec approvals, as OpenClaw's sandbox host does); `true` for the defaults.
   */
  sandbox?: boolean | SandboxOptions;
  /**
   * OpenClaw's own sandbox host: a container of a Docker Engine API (Docker, Podman, a remote engine),
   * one per `scopeKey`, made on first use with the workspace bound in. With it, host=auto and
   * host=sandbox run there (and skip exec approvals, as OpenClaw's sandbox host does). Not with
   * `sandbox`. `pty` gets the engine's terminal, `trackCwd` follows `cd` inside the bound workspace,
   * and `pathPrepend` goes before the container's own PATH (this machine's PATH never goes in).
   */
  container?: ContainerHost;
  /**
   * Carry `cd` over: a run without `workdir` starts where the scope's last run ended (agent-exec's
   * `trackCwd`), as in a terminal. Off by default, as in OpenClaw.
   */
  trackCwd?: boolean;
  security?: 'deny' | 'allowlist' | 'full';
  ask?: 'off' | 'on-miss' | 'always';
  node?: string;
  agentId?: string;
  scopeKey?: string;
  sessionKey?: string;
  /** Default yield window (ms); else PI_BASH_YIELD_MS; clamped 10..120000. */
  backgroundMs?: number;
  /** Default timeout in seconds (default 1800). */
  timeoutSec?: number;
  allowBackground?: boolean;
  pathPrepend?: string[];
  safeBins?: string[];
  safeBinTrustedDirs?: string[];
  /**
   * OpenClaw's `tools.exec.strictInlineEval`: under the allowlist, a command running an inline program
   * (`python3 -c`, `node -e`, `perl -e`, an awk or sed program, `find -exec`, `xargs CMD`...) is always
   * asked, without allow-always, and a timed-out question never lets it through. Off by default.
   */
  strictInlineEval?: boolean;
  /**
   * What started the agent's turn. `'cron'` (default profile): nobody can be asked, so without
   * `onApproval` askFallback decides, and a refusal throws OpenClaw's "exec denied: Automation runs
   * cannot wait for interactive exec approval." (code `ERR_APPROVAL_UNAVAILABLE`).
   */
  trigger?: 'cron' | 'user' | 'heartbeat' | string;
  /** Approvals file (default $OPENCLAW_HOME or $HOME, then .openclaw/exec-approvals.json). */
  approvalsFile?: string;
  elevated?: { enabled?: boolean; allowed?: boolean; defaultLevel?: 'on' | 'off' | 'ask' | 'full' };
  hasCronTool?: boolean;
  notifyOnExit?: boolean;
  notifyOnExitEmptySuccess?: boolean;
  /** Finished-session TTL for the process tool (PI_BASH_JOB_TTL_MS clamp). */
  cleanupMs?: number;
  /** Return `approval-pending` at once and run after the decision, instead of awaiting it. */
  deferApprovals?: boolean;
  onApproval?: (request: ApprovalRequest) => Promise<'allow-once' | 'allow-always' | 'deny'> | 'allow-once' | 'allow-always' | 'deny';
  /** Chat context of the calling turn, carried into exit notices' delivery context (B). */
  messageProvider?: string;
  currentChannelId?: string;
  currentThreadTs?: string;
  accountId?: string;
  /**
   * Run events: exit notices and approval outcomes. `trusted` is always false: the text carries command
   * output or command text, which must never reach the model as a system instruction.
   */
  onSystemEvent?: (text: string, context: SystemEventContext) => void;
  /**
   * Wake the agent for a run event. Default profile: `{ source: 'exec-event', intent: 'event', reason:
   * 'exec-event', coalesceMs: 0 }` (at once); `openclaw-2026-04`: `{ reason: 'exec-event' }`. `sessionKey`
   * only for agent-scoped keys (`agent:...`).
   */
  requestHeartbeat?: (request: { reason: string; sessionKey?: string; source?: 'exec-event'; intent?: 'event'; coalesceMs?: number }) => void;
  /** Route host=node runs; without it host=node is an error. */
  runOnNode?: (request: {
    toolCallId: string;
    command: string;
    cwd: string;
    env: Record<string, string>;
    node?: string;
    timeoutSec?: number;
    security: string;
    ask: string;
  }) => Promise<ToolResult>;
}

export declare function createExecTool(defaults?: BashToolDefaults): AgentTool<ExecParams, ExecDetails>;
export declare function createProcessTool(defaults?: BashToolDefaults): AgentTool<ProcessParams>;
export declare function createBashTools(defaults?: BashToolDefaults): {
  exec: AgentTool<ExecParams, ExecDetails>;
  process: AgentTool<ProcessParams>;
};
export declare function describeExecTool(options?: { agentId?: string; hasCronTool?: boolean }): string;

export {
  createClaudeCodeTools,
  isSearchOrReadCommand,
  isReadOnly,
} from './claude-code/index';
export type {
  ClaudeCodeTools,
  ClaudeCodeToolOptions,
  ClaudeTool,
  ClaudeToolResult,
  BashInput,
  BashDetails,
  BashProgress,
  BashOutputDetails,
  KillShellDetails,
  PermissionRequest,
  PermissionAnswer,
  ClaudeSandboxPolicy,
} from './claude-code/index';
