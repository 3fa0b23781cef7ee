import type { AtsClient } from '@agentic-task-service/client';
import { useState } from 'preact/hooks';
import { ForkAction } from './fork-action';
import { WorkspaceFiles } from './workspace-files';

/**
 * What can be done from one forkable event: "Files at this step" (a `tool_result` only: the
 * workspace as it left it) and "Fork from here" (with a message after a `done`).
 */
export function StepActions({
  client,
  taskId,
  eventId,
  kind,
}: {
  client: AtsClient;
  taskId: string;
  eventId: number;
  kind: 'tool_result' | 'done';
}) {
  const [showFiles, setShowFiles] = useState(false);
  return (
    <div class="step-actions">
      <div class="actions" role="group" aria-label={`Event ${eventId} actions`}>
        {kind === 'tool_result' && (
          <button type="button" class="link" aria-expanded={showFiles} onClick={() => setShowFiles(!showFiles)}>
            {showFiles ? 'Hide files' : 'Files at this step'}
          </button>
        )}
        <ForkAction client={client} taskId={taskId} afterEventId={eventId} withMessage={kind === 'done'} />
      </div>
      {showFiles && <WorkspaceFiles client={client} taskId={taskId} at={eventId} />}
    </div>
  );
}
