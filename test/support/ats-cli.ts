import type { ChildProcess } from 'node:child_process';
import { execFile, spawn } from 'node:child_process';
import { join } from 'node:path';

/** The `ats` binary as package.json's "bin" names it, and the repository it runs from. */
export const REPO_ROOT = join(__dirname, '..', '..');
export const ATS_BIN = join(REPO_ROOT, 'libs', 'cli', 'bin', 'ats.js');

/** A command line that runs `ats` with these arguments, quoted for sh. */
export function atsCommandLine(args: readonly string[]): string {
  return ['node', ATS_BIN, ...args].map((word) => `'${word.replace(/'/g, `'\\''`)}'`).join(' ');
}

export interface AtsResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `ats` with pipes for stdin, stdout and stderr (not a terminal), as a script or CI would. */
export function runAts(args: readonly string[], env: NodeJS.ProcessEnv, input = '', cwd = REPO_ROOT): Promise<AtsResult> {
  return new Promise((resolve, reject) => {
    const child = execFile(process.execPath, [ATS_BIN, ...args], { env, cwd, timeout: 60_000 }, (error, stdout, stderr) => {
      if (error && typeof error.code !== 'number') return reject(error);
      resolve({ code: error ? (error.code as number) : 0, stdout, stderr });
    });
    child.stdin!.end(input);
  });
}

/** `ats` started with pipes, for tests that signal it while it runs. */
export function startAts(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): { child: ChildProcess; output: () => AtsResult; exited: Promise<number> } {
  const child = spawn(process.execPath, [ATS_BIN, ...args], { env, cwd: REPO_ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<number>((resolve) => child.on('close', (code, signal) => resolve(code ?? (signal ? 128 : -1))));
  return { child, exited, output: () => ({ code: child.exitCode ?? -1, stdout, stderr }) };
}
