import type { IncomingMessage } from 'node:http';
import { ToolFailure } from '../tool.errors';
import type { BodyPrefix } from './bounded-body';
import { readBoundedBody } from './bounded-body';
import type { ContentKind } from './content-type';
import { contentKind, decodeText, mimeType, sniffKind } from './content-type';
import type { WebFetchConfig } from './web-fetch.config';

/** An error page only needs enough text to say what went wrong. */
export const ERROR_EXCERPT_CHARS = 2000;

export interface PageReport {
  /** The status was 2xx. */
  readonly ok: boolean;
  readonly output: string;
}

/** Reads the final response of a fetch and writes what the model sees: a short header, then the page as text. */
export async function reportPage(url: URL, response: IncomingMessage, config: WebFetchConfig): Promise<PageReport> {
  const status = response.statusCode ?? 0;
  const ok = status >= 200 && status < 300;
  const contentType = response.headers['content-type'] ?? '';
  const header = (title = '') => describeResponse(url, response, title);
  const notText = (): PageReport => {
    const what = mimeType(contentType) || 'binary data';
    if (ok) throw new ToolFailure(`${url.href} is ${what}, not text; web_fetch only reads text (HTML, plain text, markdown, JSON, XML)`);
    return { ok, output: `${header()}\n\n(the body is ${what}, not shown)` };
  };
  let kind = contentKind(contentType);
  // A binary body is refused before it is downloaded; one without a type has to be read to tell.
  if (kind === 'binary') {
    response.destroy();
    return notText();
  }
  const body = await readBoundedBody(response, config.maxBytes);
  if (kind === 'unknown') kind = sniffKind(body.bytes);
  if (kind === 'binary') return notText();
  const { title, text } = await readableText(body, contentType, kind, url);
  const notes = body.truncated ? [`[truncated: the page is larger than ${config.maxBytes} bytes]`] : [];
  const limit = ok ? config.maxOutputChars : Math.min(ERROR_EXCERPT_CHARS, config.maxOutputChars);
  return { ok, output: [header(title), cut(text, limit), ...notes].join('\n\n') };
}

function describeResponse(url: URL, response: IncomingMessage, title: string): string {
  const lines = [
    `URL: ${url.href}`,
    `Status: ${response.statusCode} ${response.statusMessage ?? ''}`.trimEnd(),
    `Content-Type: ${response.headers['content-type'] || '(none)'}`,
  ];
  if (title) lines.push(`Title: ${title.replace(/\s+/g, ' ')}`);
  return lines.join('\n');
}

async function readableText(body: BodyPrefix, contentType: string, kind: ContentKind, url: URL): Promise<{ title: string; text: string }> {
  const decoded = decodeText(body.bytes, contentType, kind, body.truncated);
  if (kind !== 'html') return { title: '', text: decoded };
  // Loaded at the first HTML page: linkedom, Readability and turndown cost every start about
  // 0.3 s of CPU and several MiB of heap for a tool many tasks never call (BENCHMARKS.md, "Footprint").
  const { htmlToMarkdown } = await import('./html-to-markdown');
  const { title, markdown } = htmlToMarkdown(decoded, url);
  return { title, text: markdown };
}

function cut(text: string, limit: number): string {
  if (text.length <= limit) return text;
  // Never split a surrogate pair: half an emoji is not text.
  const end = /[\uD800-\uDBFF]/.test(text[limit - 1]) ? limit - 1 : limit;
  return `${text.slice(0, end)}\n\n[cut: the text is ${text.length} characters, showing the first ${end}]`;
}
