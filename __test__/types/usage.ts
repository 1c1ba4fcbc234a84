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
