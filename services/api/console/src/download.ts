import type { AtsClient } from '@agentic-task-service/client';

/**
 * Downloads need the API key in a header, which a plain link cannot send: the bytes are fetched
 * by the client, then handed to the browser as a blob: URL to save under the artifact's name.
 */
export async function saveArtifact(client: AtsClient, taskId: string, path: string): Promise<void> {
  const file = await client.artifacts.download(taskId, path);
  const url = URL.createObjectURL(new Blob([file.body as BlobPart], { type: file.contentType }));
  const link = document.createElement('a');
  link.href = url;
  link.download = file.fileName || path.split('/').pop() || 'download';
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
