// Types of the Claude Code shaped tools (hand-written; checked by tsc in CI).
import type { ApprovalSummary, SandboxOptions } from '../../../index';
import type { TextContent } from '../index';

/** What a Claude Code shaped tool returns: the text for the model, whether it is an error, details. */
export interface ClaudeToolResult<D = Record<string, unknown>> {
  content: TextContent[];
  isError: boolean;
  details: D;
}

export interface ClaudeTool<I, D = Record<string, unknown>> {
  name: 'Bash' | 'BashOutput' | 'KillShell';
  readonly description: string;
  /** JSON Schema of the input (also as `parameters`). */
  inputSchema: Record<string, unknown>;
  parameters: Record<string, unknown>;
  execute(toolUseId: string, input: I, signal?: AbortSignal, onProgress?: (progress: BashProgress) => void): Promise<ClaudeToolResult<D>>;
}

export interface BashInput {
  command: string;
  /** Milliseconds (default 120000, at most 600000; both configurable). */
  timeout?: number;
  /** What the command does, in active voice, 5-10 words. */
  description?: string;
  run_in_background?: boolean;
  /** Honoured only when the sandbox policy allows unsandboxed commands; otherwise refused, not run. */
  dangerouslyDisableSandbox?: boolean;
}

export interface BashDetails {
  status: 'completed' | 'failed' | 'running' | 'denied' | 'refused';
  exitCode?: number;
  exitSignal?: string;
  timedOut?: boolean;
  interrupted?: boolean;
  durationMs?: number;
  /** Where the shell ended (the next call starts there). */
  cwd?: string;
  sandboxed?: boolean;
  /**
   * A read-only command allowed without asking ran confined: `read-only-sandbox` (nothing writable
   * but a private temp dir, no network), or `analysis-only` where this host cannot make a sandbox.
   */
  confinement?: 'read-only-sandbox' | 'analysis-only';
  approval?: ApprovalSummary;
  /** Rules an allow-always answer added to `permissions.allow`. */
  rulesAdded?: string[];
  /** The output was longer than `maxOutputChars`: the text is a preview. */
  truncated?: boolean;
  /** Every byte of the output (when cut, or while a background command runs). */
  outputFile?: string;
  /** The id for BashOutput and KillShell when the command runs in the background. */
  backgroundId?: string;
}

export interface BashProgress {
  /** The last (up to 5) lines written so far. */
  lastLines: string[];
  totalLines: number;
  totalBytes: number;
  /** The last line is still being written (no newline yet). */
  incomplete: boolean;
  elapsedMs: number;
}

export interface PermissionRequest {
  toolUseId: string;
  command: string;
  description?: string;
  cwd: string;
  /** Why the user is asked (no allow rule matches, an ask rule, the command does not parse...). */
  reason: string;
  sandboxed: boolean;
  /** The narrowest allow rules that would let this command run without asking, never a wrapper rule. */
  suggestions: string[];
}

export type PermissionAnswer = 'allow' | 'allow-once' | 'allow-always' | 'deny' | { decision: 'allow' | 'allow-once' | 'allow-always' | 'deny' };

export interface ClaudeSandboxPolicy extends Omit<SandboxOptions, 'network'> {
  /** Commands that run outside the sandbox: names or rule bodies (`docker`, `git push:*`). */
  excludedCommands?: string[];
  /** Whether `dangerouslyDisableSandbox` is honoured (default true). */
  allowUnsandboxedCommands?: boolean;
  /** Sandboxed commands run without asking; deny and ask rules still apply (Claude Code's setting). */
  autoAllowBashIfSandboxed?: boolean;
  /** Where the host cannot sandbox: true throws at creation, false runs unsandboxed; unset, each call fails. */
  failIfUnavailable?: boolean;
  /** Claude Code's setting: false turns the sandbox off. */
  enabled?: boolean;
  /** Claude Code's settings: writable roots beside the project, and what may not be written or read. */
  filesystem?: { allowWrite?: string[]; denyWrite?: string[]; denyRead?: string[]; allowRead?: string[] };
  /** true/false, or Claude Code's settings: allowedDomains/deniedDomains (through the sandbox's proxy), allowUnixSockets. */
  network?: boolean | { allowedDomains?: string[]; deniedDomains?: string[]; allowLocalhost?: number[]; allowUnixSockets?: string[]; allowLocalBinding?: boolean };
  enableWeakerNestedSandbox?: boolean;
}

export interface ClaudeCodeToolOptions {
  /** Where the first command runs (default: the process's cwd); later ones follow `cd`. */
  cwd?: string;
  /** Added to every command's environment (with GIT_EDITOR=true and AGENT_EXEC_AGENT=1). */
  env?: Record<string, string>;
  /** Claude Code rules: deny, then ask, then allow; every segment of a compound command must match. */
  /**
   * Claude Code's permission rules. Allow rules hold in `cwd` and `additionalDirectories` only: a
   * command that runs (or `cd`s) elsewhere is asked. Deny rules are a convenience, not a boundary.
   */
  permissions?: { allow?: string[]; ask?: string[]; deny?: string[]; additionalDirectories?: string[] };
  /** Read-only commands run without asking (default true). */
  autoAllowReadOnly?: boolean;
  /** Asked when no rule allows a command; without it such commands are denied. */
  onPermissionRequest?: (request: PermissionRequest) => PermissionAnswer | Promise<PermissionAnswer>;
  /** Told of the rules an allow-always answer added, to persist them. */
  onRulesAdded?: (rules: string[]) => void | Promise<void>;
  /**
   * A sandboxed command asks for a network name no allowed or denied domain decides (Claude Code's
   * "Network request outside of sandbox"): `allow-once`, `allow-always` ("don't ask again for HOST":
   * the tool set allows the name from then on and tells `onDomainsAllowed`) or `deny`. With it and no
   * network setting of its own, the sandbox's network is by domain with nothing allowed yet.
   */
  onNetworkRequest?: (request: { host: string; port: number; toolUseId: string; command: string }) =>
    | 'allow-once'
    | 'allow-always'
    | 'deny'
    | Promise<'allow-once' | 'allow-always' | 'deny'>;
  /** Names allowed for good by an `allow-always` answer, for a host that keeps them in its settings. */
  onDomainsAllowed?: (hosts: string[]) => void | Promise<void>;
  /** How long the user has to answer (default 120000 ms); then the command is denied. */
  permissionTimeoutMs?: number;
  /** Default `timeout` (120000 ms, or $BASH_DEFAULT_TIMEOUT_MS). */
  defaultTimeoutMs?: number;
  /** Largest `timeout` (600000 ms, or $BASH_MAX_TIMEOUT_MS). */
  maxTimeoutMs?: number;
  /** Characters of output a result shows (30000, or $BASH_MAX_OUTPUT_LENGTH). */
  maxOutputChars?: number;
  /** A foreground command still running after this moves to the background (default 15000; 0: never). */
  blockingBudgetMs?: number;
  /** First progress report after this (default 2000 ms), then every `progressEveryMs` (1000). */
  progressAfterMs?: number;
  progressEveryMs?: number;
  onProgress?: (progress: BashProgress) => void;
  /** Sandbox every command (writes only under the cwd and a private temp dir, no network). */
  sandbox?: boolean | ClaudeSandboxPolicy;
  /**
   * A Claude Code settings file (`.claude/settings.json`: its `permissions` and `sandbox`) or srt's
   * settings file (`{network, filesystem}`), relative to `cwd`; `permissions` and `sandbox` given here win.
   */
  settingsFile?: string;
  /** The tool set's scope: its sessions and tracked directory (default: one of its own). */
  scopeKey?: string;
  killGraceMs?: number;
}

export interface BashOutputDetails {
  status: 'running' | 'completed' | 'failed' | 'killed' | 'not-found';
  exitCode?: number;
  exitSignal?: string;
  outputFile?: string;
}

export interface KillShellDetails {
  status: string;
  exitSignal?: string;
  survivors?: number[];
}

export interface ClaudeCodeTools {
  bash: ClaudeTool<BashInput, BashDetails>;
  bashOutput: ClaudeTool<{ bash_id: string; filter?: string }, BashOutputDetails>;
  killShell: ClaudeTool<{ shell_id: string }, KillShellDetails>;
  tools: [ClaudeTool<BashInput, BashDetails>, ClaudeTool<{ bash_id: string; filter?: string }, BashOutputDetails>, ClaudeTool<{ shell_id: string }, KillShellDetails>];
  /** The rules in force, allow-always answers included. */
  rules(): { allow: string[]; ask: string[]; deny: string[] };
  /** Permission rules of other tools that change nothing of the shell's (WebFetch, mcp__..., globs the sandbox cannot hide). */
  unappliedRules(): string[];
  /** The directory the next command starts in. */
  cwd(): string;
  /** Kill and forget every session of this tool set. */
  dispose(): Promise<void>;
}

export declare function createClaudeCodeTools(options?: ClaudeCodeToolOptions): ClaudeCodeTools;

/** For folding output in a UI: a part searches, a part reads or lists, every active part does one of those. */
export declare function isSearchOrReadCommand(command: string, options?: { cwd?: string; env?: Record<string, string> }): {
  isSearch: boolean;
  isRead: boolean;
  collapsible: boolean;
};

/** Nothing in the command writes, deletes or runs other programs. */
export declare function isReadOnly(command: string, options?: { cwd?: string; env?: Record<string, string> }): boolean;
