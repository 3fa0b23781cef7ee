import type { CreateTaskRequest } from './types';

/** A file to upload with a new task: its name in the workspace and its bytes. */
export interface UploadFile {
  readonly name: string;
  readonly content: Blob | Uint8Array | string;
  /** Its media type; a .zip is extracted into the workspace whatever the type says. */
  readonly type?: string;
}

/** An artifact's bytes with what its headers say about it. */
export interface ArtifactDownload<Body> {
  /** The exact file name (Content-Disposition's filename*). */
  readonly fileName: string;
  readonly contentType: string;
  readonly size: number;
  readonly body: Body;
}

/**
 * The multipart form of a create: text fields as the document's CreateTaskForm says (booleans as
 * text, numbers in digits, objects JSON-encoded), then the files, each a `files` part.
 */
export function createTaskForm(fields: CreateTaskRequest, files: readonly UploadFile[]): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    form.append(name, typeof value === 'object' ? JSON.stringify(value) : typeof value === 'number' ? inDigits(value) : String(value));
  }
  for (const file of files) {
    // A Node Buffer is a Uint8Array over ArrayBufferLike, which DOM's BlobPart type refuses; Blob copies it all the same.
    const parts = [file.content] as unknown as ConstructorParameters<typeof Blob>[0];
    const blob = file.content instanceof Blob ? file.content : new Blob(parts, { type: file.type ?? 'application/octet-stream' });
    form.append('files', blob, file.name);
  }
  return form;
}

/**
 * A number as digits with an optional decimal point, the only form a multipart number part may
 * take: String() writes 1e-7 and 1e21 in exponent form, which the service refuses.
 */
export function inDigits(value: number): string {
  const text = String(value);
  const exponent = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(text);
  if (!exponent) return text;
  const [, sign, lead, rest = '', power] = exponent;
  const digits = lead + rest;
  const shift = Number(power);
  return sign + (shift < 0 ? `0.${'0'.repeat(-shift - 1)}${digits}` : digits.padEnd(shift + 1, '0'));
}

/** The name, type and size of a download answer, around its body. */
export function readDownload(response: Response): ArtifactDownload<ReadableStream<Uint8Array>> {
  return {
    fileName: fileNameOf(response.headers.get('content-disposition') ?? ''),
    contentType: response.headers.get('content-type') ?? 'application/octet-stream',
    size: Number(response.headers.get('content-length') ?? -1),
    body: response.body ?? new ReadableStream({ start: (controller) => controller.close() }),
  };
}

/** RFC 6266: `filename*=UTF-8''<percent-encoded>` when present (the exact name), else `filename="…"`. */
export function fileNameOf(disposition: string): string {
  const extended = /filename\*=UTF-8''([^;]+)/i.exec(disposition);
  if (extended) return decodeURIComponent(extended[1].trim());
  const plain = /filename="((?:[^"\\]|\\.)*)"/i.exec(disposition);
  return plain ? plain[1].replace(/\\(.)/g, '$1') : '';
}
