import type { ArtifactFile, AtsClient } from '@agentic-task-service/client';
import { useEffect, useState } from 'preact/hooks';
import { messageOf } from '../errors';
import { parseCsv } from '../model/csv';

/** Larger files are offered for download only. */
const PREVIEW_MAX_BYTES = 1_000_000;

type Preview =
  { kind: 'text'; text: string } | { kind: 'table'; rows: string[][] } | { kind: 'image'; url: string } | { kind: 'error'; text: string };

export const canPreview = (file: ArtifactFile): boolean =>
  file.size <= PREVIEW_MAX_BYTES &&
  ['text', 'markdown', 'json', 'csv', 'code', 'image'].includes(file.category) &&
  file.mimeType !== 'image/svg+xml';

/**
 * Text, markdown (shown as its source text), JSON (pretty-printed), CSV (a table of text cells)
 * and images (a blob: URL of the authenticated download). Never HTML: an SVG could carry script.
 */
export function ArtifactPreview({ client, taskId, file }: { client: AtsClient; taskId: string; file: ArtifactFile }) {
  const [preview, setPreview] = useState<Preview>();
  useEffect(() => {
    let url: string | undefined;
    void client.artifacts.download(taskId, file.path).then(
      (download) => {
        if (file.category === 'image') {
          url = URL.createObjectURL(new Blob([download.body as BlobPart], { type: download.contentType }));
          return setPreview({ kind: 'image', url });
        }
        const text = new TextDecoder().decode(download.body);
        if (file.category === 'csv') return setPreview({ kind: 'table', rows: parseCsv(text) });
        if (file.category === 'json') return setPreview({ kind: 'text', text: prettyJson(text) });
        setPreview({ kind: 'text', text });
      },
      (failure) => setPreview({ kind: 'error', text: messageOf(failure) }),
    );
    return () => url && URL.revokeObjectURL(url);
  }, [file.path, file.modifiedAt]);

  if (!preview) return <p class="muted">Loading preview…</p>;
  if (preview.kind === 'error') return <p class="error">{preview.text}</p>;
  if (preview.kind === 'image') return <img class="preview-image" src={preview.url} alt={file.path} />;
  if (preview.kind === 'table') {
    return (
      <table class="preview-table">
        <tbody>
          {preview.rows.map((row, r) => (
            <tr key={r}>{row.map((cell, c) => (r === 0 ? <th key={c}>{cell}</th> : <td key={c}>{cell}</td>))}</tr>
          ))}
        </tbody>
      </table>
    );
  }
  return <pre class="preview-text">{preview.text}</pre>;
}

const prettyJson = (text: string): string => {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
};
