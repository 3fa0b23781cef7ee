import type { WorkspaceChange } from '@agentic-task-service/client';
import { formatBytes } from '../model/units';

/**
 * What one tool call changed in the workspace (a `tool_result`'s `changes`): each path, how it
 * changed and its size. Paths come from the sandbox and are shown as text.
 */
export function WorkspaceChanges({ changes, truncated }: { changes?: readonly WorkspaceChange[]; truncated?: boolean }) {
  if (!changes?.length && !truncated) return null;
  return (
    <ul class="changes" aria-label="Workspace changes">
      {changes?.map((change) => (
        <li key={change.path}>
          <span class="change-path">{change.path}</span> <span class={`change-${change.change}`}>{change.change}</span>
          {change.change !== 'deleted' && <span class="muted"> · {formatBytes(change.size)}</span>}
        </li>
      ))}
      {truncated && <li class="muted">and more</li>}
    </ul>
  );
}
