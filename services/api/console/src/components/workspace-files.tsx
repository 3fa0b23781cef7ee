import type { AtsClient, WorkspaceFile } from '@agentic-task-service/client';
import { useEffect, useState } from 'preact/hooks';
import { saveWorkspaceFile } from '../download';
import { messageOf } from '../errors';
import { formatBytes } from '../model/units';

/** A page of a few hundred rows keeps the first answer quick; "More files" reads the next one. */
const PAGE_SIZE = 200;

/**
 * The workspace's files as they were right after event `at` (now when absent), read from the
 * task's checkpoints a page at a time; each file downloads its bytes of that moment.
 */
export function WorkspaceFiles({ client, taskId, at }: { client: AtsClient; taskId: string; at?: number }) {
  const [files, setFiles] = useState<WorkspaceFile[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<string>();

  const load = async (cursor: string | undefined, signal?: AbortSignal) => {
    setLoading(true);
    setError(undefined);
    try {
      const page = await client.files.list(taskId, { ...(at === undefined ? {} : { at }), limit: PAGE_SIZE, cursor });
      if (signal?.aborted) return;
      setFiles((before) => (cursor === undefined ? page.files : [...before, ...page.files]));
      setNext(page.nextCursor);
    } catch (failure) {
      if (!signal?.aborted) setError(messageOf(failure));
    } finally {
      if (!signal?.aborted) setLoading(false);
    }
  };
  useEffect(() => {
    const abort = new AbortController();
    void load(undefined, abort.signal);
    return () => abort.abort();
  }, [client, taskId, at]);

  const label = at === undefined ? 'Files now' : `Files after event ${at}`;
  return (
    <div class="workspace-files" role="region" aria-label={label}>
      <strong>{label}</strong>
      {!loading && !error && files.length === 0 && <p class="muted">No files.</p>}
      <ul class="artifacts">
        {files.map((file) => (
          <li key={file.path}>
            <button
              type="button"
              class="link"
              aria-label={`Download ${file.path}`}
              onClick={() => {
                setError(undefined);
                saveWorkspaceFile(client, taskId, file.path, at).catch((failure) => setError(messageOf(failure)));
              }}
            >
              {file.path}
            </button>{' '}
            <span class="muted">{formatBytes(file.size)}</span>
          </li>
        ))}
      </ul>
      {next && (
        <button type="button" class="secondary" disabled={loading} onClick={() => void load(next)}>
          More files
        </button>
      )}
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
    </div>
  );
}
