import type { WorkspaceFile } from '@agentic-task-service/client';
import { bytes } from './event-printer';
import { safeLine } from './untrusted-text';

/**
 * One line of `ats files`: the fixed-width columns first (sha256, size) and the path last, as
 * `sha256sum` prints them, so pages can be printed as they come without measuring every path.
 * The path comes from the sandbox: shown with its control characters escaped.
 */
export function fileLine(file: WorkspaceFile): string {
  return `${safeLine(file.sha256)}  ${bytes(file.size).padStart(10)}  ${safeLine(file.path)}`;
}

/** Where `ats files` is looking: after event N, or now. */
export const momentOf = (at: number | undefined): string => (at === undefined ? 'now' : `after event ${at}`);
