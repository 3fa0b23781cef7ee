import { lstat, realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { WorkspacePathError } from './workspace-path.error';

export interface ResolveOptions {
  /** Accept a path naming the workspace root itself (`.`, `''`), as listing does; file tools do not. */
  readonly allowRoot?: boolean;
}

/**
 * The absolute real path of `relPath` inside the workspace, or a WorkspacePathError.
 * The target may not exist yet (writes): the deepest existing ancestor is resolved with realpath
 * and must stay inside `realpath(root)`, so a symlink can never lead out of the workspace.
 */
export async function resolveInWorkspace(root: string, relPath: string, options: ResolveOptions = {}): Promise<string> {
  if (relPath.includes('\0')) throw new WorkspacePathError(relPath, 'contains a NUL byte');
  if (isAbsolute(relPath)) throw new WorkspacePathError(relPath, 'is absolute; use a path relative to the workspace root');
  const realRoot = await realpath(root);
  const lexical = resolve(realRoot, relPath);
  if (!isInside(realRoot, lexical)) throw new WorkspacePathError(relPath, 'is outside the workspace');
  if (lexical === realRoot && !options.allowRoot) {
    throw new WorkspacePathError(relPath, relPath === '' ? 'is empty; name a file' : 'is the workspace root; name a file');
  }
  const real = await realpathOfDeepestExisting(lexical, relPath);
  if (!isInside(realRoot, real)) throw new WorkspacePathError(relPath, 'leads outside the workspace through a symlink');
  return real;
}

/** `absolutePath` relative to `root`, with `/` separators and `.` for the root itself. Lexical only. */
export function toWorkspaceRelative(root: string, absolutePath: string): string {
  if (!isInside(root, absolutePath)) throw new WorkspacePathError(absolutePath, 'is outside the workspace');
  const rel = relative(root, absolutePath);
  return rel === '' ? '.' : rel.split(sep).join('/');
}

function isInside(root: string, candidate: string): boolean {
  const rel = relative(root, candidate);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

async function realpathOfDeepestExisting(absolute: string, relPath: string): Promise<string> {
  const missing: string[] = [];
  let current = absolute;
  for (;;) {
    try {
      return join(await realpath(current), ...missing);
    } catch (error) {
      if (!isMissing(error)) throw error;
    }
    // realpath failed although the entry exists: it is a dangling symlink, whose target
    // cannot be checked, and a write through it could create a file wherever it points.
    if (await exists(current)) throw new WorkspacePathError(relPath, 'goes through a symlink whose target does not exist');
    missing.unshift(basename(current));
    current = dirname(current);
  }
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

async function exists(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    () => false,
  );
}
