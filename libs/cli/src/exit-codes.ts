/** The process exit statuses `ats` promises (docs/guide/cli.md). */
export const ExitCode = {
  /** The task completed, or the command did what it was asked. */
  ok: 0,
  /** The task failed or was cancelled, or a request failed (the message says which). */
  failed: 1,
  /** Not a terminal and a tool call waits for approval that no `--approve` decides. */
  pendingApproval: 3,
  /** Ctrl-C: the task was cancelled or left running (detached). */
  interrupted: 130,
} as const;

export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** Ends a command with an exit status and, on stderr, a message (already safe to print). */
export class CliExit extends Error {
  override readonly name = 'CliExit';
  constructor(
    readonly code: ExitCode,
    message = '',
  ) {
    super(message);
  }
}
