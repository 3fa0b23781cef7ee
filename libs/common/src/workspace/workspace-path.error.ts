/** A tool asked for a path the workspace must not reach: outside it, absolute, empty or malformed. */
export class WorkspacePathError extends Error {
  readonly code = 'WORKSPACE.PATH_OUTSIDE';
  constructor(
    readonly path: string,
    reason: string,
  ) {
    // JSON quoting keeps NUL bytes and other control characters visible in the message.
    super(`path ${JSON.stringify(path)} ${reason}`);
    this.name = 'WorkspacePathError';
  }
}
