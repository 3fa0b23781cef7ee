import type { ExecResult } from '../sandbox-provider.port';

/** A variable that cannot be set: its value holds a NUL, which no environment can carry. */
export class UnsettableVariableError extends Error {
  constructor(readonly variable: string) {
    // Names only: the value may be a secret.
    super(`the environment variable ${variable} holds a NUL character, which an environment cannot carry; the command did not run`);
  }
}

/**
 * Refuses an environment with a NUL in a value before anything is spawned: Node would otherwise
 * throw an error quoting the value (a secret, perhaps), and bwrap's NUL-separated options would
 * read the rest as options of their own.
 */
export function assertSettable(env: Readonly<Record<string, string>>): void {
  for (const [name, value] of Object.entries(env)) if (value.includes('\0')) throw new UnsettableVariableError(name);
}

/** The result a command that could not start because of its environment reports. */
export function unsettableResult(error: UnsettableVariableError): ExecResult {
  return { exitCode: 126, output: `${error.message}\n`, truncated: false, durationMs: 0 };
}
