import type { ArtifactDownload, AtsClient } from '@agentic-task-service/client';

/**
 * Downloads need the API key in a header, which a plain link cannot send: the bytes are fetched
 * by the client, then handed to the browser as a blob: URL to save under the artifact's name.
 */
export async function saveArtifact(client: AtsClient, taskId: string, path: string): Promise<void> {
  saveBytes(await client.artifacts.download(taskId, path), path);
}

/** A workspace file as it was right after event `at` (now when absent), saved the same way. */
export async function saveWorkspaceFile(client: AtsClient, taskId: string, path: string, at?: number): Promise<void> {
  saveBytes(await client.files.download(taskId, path, at === undefined ? {} : { at }), path);
}

function saveBytes(file: ArtifactDownload<Uint8Array>, path: string): void {
  const url = URL.createObjectURL(new Blob([file.body as BlobPart], { type: file.contentType }));
  const link = document.createElement('a');
  link.href = url;
  link.download = file.fileName || path.split('/').pop() || 'download';
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
