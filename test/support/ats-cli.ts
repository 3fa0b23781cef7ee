import { execFile } from 'node:child_process';
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
export function runAts(args: readonly string[], env: NodeJS.ProcessEnv, input = ''): Promise<AtsResult> {
  return new Promise((resolve, reject) => {
    const child = execFile(process.execPath, [ATS_BIN, ...args], { env, cwd: REPO_ROOT, timeout: 60_000 }, (error, stdout, stderr) => {
      if (error && typeof error.code !== 'number') return reject(error);
      resolve({ code: error ? (error.code as number) : 0, stdout, stderr });
    });
    child.stdin!.end(input);
  });
}
