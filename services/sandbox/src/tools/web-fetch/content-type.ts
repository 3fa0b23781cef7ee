/** How a body is turned into text: converted from HTML, passed through, refused, or sniffed (no type given). */
export type ContentKind = 'html' | 'text' | 'binary' | 'unknown';

const TEXT_APPLICATION_TYPES = new Set([
  'application/json',
  'application/xml',
  'application/javascript',
  'application/ecmascript',
  'application/x-ndjson',
  'application/yaml',
  'application/x-yaml',
  'application/toml',
  'application/x-sh',
]);

export function mimeType(contentType: string): string {
  return contentType.split(';')[0].trim().toLowerCase();
}

export function contentKind(contentType: string): ContentKind {
  const mime = mimeType(contentType);
  if (mime === '') return 'unknown';
  if (mime === 'text/html' || mime === 'application/xhtml+xml') return 'html';
  if (mime.startsWith('text/') || TEXT_APPLICATION_TYPES.has(mime) || /^application\/[\w.+-]+\+(json|xml)$/.test(mime)) return 'text';
  return 'binary';
}

/** For a body sent without a content type: NUL bytes mean binary (as git and grep decide), a leading tag means HTML. */
export function sniffKind(bytes: Uint8Array): Exclude<ContentKind, 'unknown'> {
  if (bytes.includes(0)) return 'binary';
  const start = Buffer.from(bytes.subarray(0, 512)).toString('latin1').trimStart().toLowerCase();
  return start.startsWith('<!doctype html') || start.startsWith('<html') ? 'html' : 'text';
}

/**
 * Decodes with the charset from the header or, for HTML, from an early <meta>; UTF-8 otherwise or
 * when the label is unknown. A truncated body may end inside a character, which is dropped.
 */
export function decodeText(bytes: Uint8Array, contentType: string, kind: ContentKind, truncated: boolean): string {
  const declared = /charset\s*=\s*"?([\w.:-]+)/i.exec(contentType)?.[1] ?? (kind === 'html' ? metaCharset(bytes) : undefined);
  return decoderFor(declared).decode(bytes, { stream: truncated });
}

function decoderFor(label: string | undefined) {
  try {
    return new TextDecoder(label ?? 'utf-8');
  } catch {
    return new TextDecoder('utf-8'); // an unknown label: UTF-8 is the web's default
  }
}

function metaCharset(bytes: Uint8Array): string | undefined {
  const head = Buffer.from(bytes.subarray(0, 2048)).toString('latin1');
  return /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i.exec(head)?.[1];
}
