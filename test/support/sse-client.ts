import { EventSource } from 'eventsource';

export interface SseEvent {
  readonly kind: string;
  readonly id: number;
  readonly payload: { type: string; data: Record<string, unknown> };
}

/** Every kind the stream carries (docs/openapi.json TaskEvent), for reads that must miss none. */
export const ALL_EVENT_KINDS = [
  'message',
  'status',
  'usage',
  'content',
  'tool_call',
  'tool_decision',
  'tool_started',
  'tool_result',
  'artifact',
  'artifact_links',
  'sandbox',
  'notice',
  'egress',
  'done',
];

/**
 * Follows a stream with the real `eventsource` client (the browser EventSource API) until a
 * `done` arrives or `until` says stop. EventSource reconnects on its own when a stream ends, so
 * the client is closed as soon as we have what we wanted.
 */
export function followStream(
  url: string,
  apiKey: string,
  options: { until?: (events: SseEvent[]) => boolean; timeoutMs?: number; kinds?: string[] } = {},
): Promise<SseEvent[]> {
  const kinds = options.kinds ?? [
    'message',
    'status',
    'usage',
    'content',
    'tool_call',
    'tool_decision',
    'tool_started',
    'tool_result',
    'done',
  ];
  const until = options.until ?? ((events) => events.some((e) => e.kind === 'done'));
  return new Promise((resolve, reject) => {
    const events: SseEvent[] = [];
    const source = new EventSource(url, {
      fetch: (input, init) => fetch(input, { ...init, headers: { ...init?.headers, authorization: `Bearer ${apiKey}` } }),
    });
    const timer = setTimeout(() => {
      source.close();
      reject(new Error(`stream did not finish in time; got ${events.map((e) => `${e.id}:${e.kind}`).join(', ')}`));
    }, options.timeoutMs ?? 15_000);
    for (const kind of kinds) {
      source.addEventListener(kind, (message) => {
        events.push({ kind, id: Number(message.lastEventId), payload: JSON.parse(message.data) });
        if (until(events)) {
          clearTimeout(timer);
          source.close();
          resolve(events);
        }
      });
    }
    source.onerror = (error) => {
      if (source.readyState === EventSource.CLOSED) {
        clearTimeout(timer);
        reject(new Error(`stream failed: ${String((error as { message?: string }).message ?? error)}`));
      }
    };
  });
}

/** Reads a whole SSE response as raw text (for framing checks); resolves when the server ends it. */
export async function readRawStream(
  url: string,
  headers: Record<string, string>,
  timeoutMs = 15_000,
): Promise<{ status: number; text: string; contentType: string | null }> {
  const response = await fetch(url, { headers, signal: AbortSignal.timeout(timeoutMs) });
  const text = await response.text();
  return { status: response.status, text, contentType: response.headers.get('content-type') };
}

/** Parses raw SSE text into blocks of fields; comment blocks are returned as `{ comment }`. */
export function parseSseBlocks(text: string): Array<Record<string, string>> {
  return text
    .split('\n\n')
    .filter((b) => b.trim() !== '')
    .map((block) => {
      const fields: Record<string, string> = {};
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) fields.comment = line.slice(1).trim();
        else {
          const i = line.indexOf(':');
          fields[line.slice(0, i)] = line.slice(i + 1).replace(/^ /, '');
        }
      }
      return fields;
    });
}
