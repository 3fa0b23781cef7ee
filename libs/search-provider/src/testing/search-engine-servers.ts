import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A page the fake engine knows: it matches a query sharing a word with its title or text. */
export interface IndexedPage {
  readonly title: string;
  readonly url: string;
  readonly text: string;
}

/** How the engine answers its next requests (default `answer`). */
export type EngineBehaviour =
  | { readonly kind: 'answer' }
  | { readonly kind: 'status'; readonly status: number; readonly contentType: string; readonly body: string }
  | { readonly kind: 'hang' }
  | { readonly kind: 'oversized'; readonly bytes: number }
  /** A 307 to `location` + the request's own path and query. */
  | { readonly kind: 'redirect'; readonly location: string };

export interface ReceivedSearch {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

export interface SearchEngineServer {
  /** What to configure: SEARXNG_URL, BRAVE_API_URL or TAVILY_API_URL. */
  readonly endpoint: URL;
  readonly received: ReceivedSearch[];
  behave(behaviour: EngineBehaviour): void;
  close(): Promise<void>;
}

export type SearchEngineKind = 'searxng' | 'brave' | 'tavily';

/**
 * A real HTTP server on a loopback port answering in one provider's documented wire format:
 * SearXNG's `/search?format=json`, Brave's `/res/v1/web/search` (token in `X-Subscription-Token`,
 * matches wrapped in `<strong>`), Tavily's `POST /search` (bearer token). Brave and Tavily
 * refuse any key but `apiKey` with their documented 401 bodies.
 */
export async function startSearchEngineServer(
  kind: SearchEngineKind,
  pages: readonly IndexedPage[],
  apiKey = 'test-search-key',
): Promise<SearchEngineServer> {
  const received: ReceivedSearch[] = [];
  let behaviour: EngineBehaviour = { kind: 'answer' };
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://engine');
    const body = await readBody(req);
    received.push({ method: req.method ?? '', path: url.pathname, query: url.searchParams, headers: req.headers, body });
    if (behaviour.kind === 'hang') return;
    if (behaviour.kind === 'status')
      return void res.writeHead(behaviour.status, { 'content-type': behaviour.contentType }).end(behaviour.body);
    if (behaviour.kind === 'oversized') return void sendOversized(res, behaviour.bytes);
    if (behaviour.kind === 'redirect')
      return void res.writeHead(307, { location: `${behaviour.location}${url.pathname}${url.search}` }).end();
    if (kind === 'searxng') return answerSearxng(url, pages, res);
    if (kind === 'brave') return answerBrave(req, url, pages, apiKey, res);
    return answerTavily(req, body, pages, apiKey, res);
  };
  // Node's http server ignores a handler's promise; a failure still surfaces as an unhandled rejection.
  const server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const paths: Record<SearchEngineKind, string> = { searxng: '/', brave: '/res/v1/web/search', tavily: '/search' };
  return {
    endpoint: new URL(`http://127.0.0.1:${port}${paths[kind]}`),
    received,
    behave: (next) => (behaviour = next),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function matching(pages: readonly IndexedPage[], query: string): IndexedPage[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  return pages.filter((p) => words.some((w) => `${p.title} ${p.text}`.toLowerCase().includes(w)));
}

function answerSearxng(url: URL, pages: readonly IndexedPage[], res: ServerResponse): void {
  // SearXNG answers 403 when the JSON format is not enabled in settings.yml.
  if (url.pathname !== '/search' || url.searchParams.get('format') !== 'json') {
    return void res.writeHead(403, { 'content-type': 'text/html' }).end('<html><body>403 Forbidden</body></html>');
  }
  const query = url.searchParams.get('q') ?? '';
  const hits = matching(pages, query);
  sendJson(res, 200, {
    query,
    number_of_results: hits.length,
    results: hits.map((p, i) => ({
      url: p.url,
      title: p.title,
      content: p.text,
      engine: 'duckduckgo',
      engines: ['duckduckgo', 'bing'],
      positions: [i + 1],
      score: 1 / (i + 1),
      category: 'general',
    })),
    answers: [],
    corrections: [],
    infoboxes: [],
    suggestions: [],
    unresponsive_engines: [],
  });
}

function answerBrave(req: IncomingMessage, url: URL, pages: readonly IndexedPage[], apiKey: string, res: ServerResponse): void {
  const token = req.headers['x-subscription-token'];
  if (token !== apiKey) {
    return sendJson(res, 401, {
      type: 'ErrorResponse',
      error: {
        id: 'c8a0c1d5',
        status: 401,
        code: 'SUBSCRIPTION_TOKEN_INVALID',
        detail: `The provided subscription token ${String(token)} is invalid.`,
        meta: {},
      },
      time: Date.now(),
    });
  }
  const query = url.searchParams.get('q') ?? '';
  const count = Math.min(Number(url.searchParams.get('count') ?? 20), 20);
  const hits = matching(pages, query).slice(0, count);
  const words = query.split(/\s+/).filter(Boolean);
  const highlight = (text: string) =>
    words.reduce((t, w) => t.replace(new RegExp(`(${escapeRegExp(w)})`, 'gi'), '<strong>$1</strong>'), text.replace(/'/g, '&#x27;'));
  sendJson(res, 200, {
    type: 'search',
    query: { original: query, more_results_available: false },
    mixed: { type: 'mixed', main: hits.map((_, index) => ({ type: 'web', index, all: false })) },
    // Brave leaves `web` out when nothing matched.
    ...(hits.length > 0
      ? {
          web: {
            type: 'search',
            family_friendly: true,
            results: hits.map((p) => ({
              type: 'search_result',
              title: p.title,
              url: p.url,
              description: highlight(p.text),
              is_source_local: false,
              language: 'en',
            })),
          },
        }
      : {}),
  });
}

function answerTavily(req: IncomingMessage, body: string, pages: readonly IndexedPage[], apiKey: string, res: ServerResponse): void {
  if (req.method !== 'POST') return sendJson(res, 405, { detail: 'Method Not Allowed' });
  if (req.headers.authorization !== `Bearer ${apiKey}`)
    return sendJson(res, 401, { detail: { error: `Unauthorized: missing or invalid API key (${String(req.headers.authorization)}).` } });
  let request: { query?: unknown; max_results?: unknown };
  try {
    request = JSON.parse(body);
  } catch {
    return sendJson(res, 400, { detail: { error: 'Invalid JSON body' } });
  }
  if (typeof request.query !== 'string') return sendJson(res, 400, { detail: { error: 'query is required' } });
  const max = typeof request.max_results === 'number' ? request.max_results : 5;
  const hits = matching(pages, request.query).slice(0, max);
  sendJson(res, 200, {
    query: request.query,
    follow_up_questions: null,
    answer: null,
    images: [],
    results: hits.map((p, i) => ({ title: p.title, url: p.url, content: p.text, score: 1 - i / 100, raw_content: null })),
    response_time: 0.42,
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function sendOversized(res: ServerResponse, bytes: number): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  const chunk = Buffer.alloc(64 * 1024, 0x20);
  let sent = 0;
  const pump = (): void => {
    while (sent < bytes) {
      sent += chunk.length;
      if (!res.write(chunk)) return void res.once('drain', pump);
    }
    res.end();
  };
  res.on('error', () => undefined);
  pump();
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
