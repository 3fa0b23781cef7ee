import type { ArtifactFile, AtsClient } from '@agentic-task-service/client';
import { useState } from 'preact/hooks';
import { saveArtifact } from '../download';
import { messageOf } from '../errors';
import { ArtifactPreview, canPreview } from './artifact-preview';

/** Each artifact is a link whose text is its path (CONTRACT "Console and CLI"). */
export function ArtifactList({ client, taskId, files }: { client: AtsClient; taskId: string; files: ArtifactFile[] }) {
  const [open, setOpen] = useState<string>();
  const [error, setError] = useState<string>();
  if (!files.length) return <p class="muted">No files yet.</p>;
  const href = (path: string) => `/api/v1/tasks/${encodeURIComponent(taskId)}/artifacts/download?path=${encodeURIComponent(path)}`;
  return (
    <>
      <ul class="artifacts">
        {files.map((file) => (
          <li key={file.path}>
            <a
              href={href(file.path)}
              onClick={(event) => {
                event.preventDefault();
                setError(undefined);
                saveArtifact(client, taskId, file.path).catch((failure) => setError(messageOf(failure)));
              }}
            >
              {file.path}
            </a>{' '}
            <span class="muted">
              {file.size} bytes · {file.mimeType}
            </span>{' '}
            {canPreview(file) && (
              <button
                type="button"
                class="link"
                aria-label={`Preview ${file.path}`}
                aria-expanded={open === file.path}
                onClick={() => setOpen(open === file.path ? undefined : file.path)}
              >
                {open === file.path ? 'Hide' : 'Preview'}
              </button>
            )}
            {open === file.path && <ArtifactPreview client={client} taskId={taskId} file={file} />}
          </li>
        ))}
      </ul>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
    </>
  );
}
