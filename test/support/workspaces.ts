import { workspaceMountPoint } from '../../services/sandbox/src/provider/bubblewrap/host/workspace-volumes';

/**
 * Where the sandbox mounts a task's workspace (docs/operations/security.md, "Where a workspace lives"): a test reads a
 * task's files there. `DATA_DIR/workspaces/<taskId>` is the filesystem image behind it.
 */
export function workspaceOf(dataDir: string, taskId: string): string {
  return workspaceMountPoint({ dataDir, runtimeDir: '/run/agentic-task-service' }, taskId);
}
