import { SecretVault } from '@app/common';
import { SearchFailedError } from './search-provider.port';

/** The most bytes of a provider's answer read; a search page is a few tens of KiB. */
export const MAX_ANSWER_BYTES = 2 * 1024 * 1024;

export interface SearchRequest {
  /** The provider's name, used in every error message. */
  readonly provider: string;
  readonly url: URL;
  readonly init: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string };
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
  /** What to check when the provider refuses the request (401/403), e.g. the variable holding the key. */
  readonly refusalHint?: string;
  /** Never to appear in an error message, even if the provider echoes it. */
  readonly secret?: string;
}

/**
 * Sends one search request and parses the JSON answer. Every failure becomes a
 * `SearchFailedError` saying what happened (unreachable, refused, rate limited, timed out,
 * oversized, not JSON); only the caller's own abort is rethrown as it came.
 */
export async function fetchSearchJson(request: SearchRequest): Promise<unknown> {
  const timeout = AbortSignal.timeout(request.timeoutMs);
  const signal = request.signal ? AbortSignal.any([request.signal, timeout]) : timeout;
  try {
    // A request carrying a key never follows a redirect: the key header would go wherever it points.
    const response = await fetch(request.url, { ...request.init, signal, redirect: request.secret ? 'manual' : 'follow' });
    if (response.status >= 300 && response.status < 400) {
      await response.body?.cancel().catch(() => undefined);
      throw new SearchFailedError(describeRedirect(request, response));
    }
    const body = await readBounded(response, request.provider);
    if (!response.ok) throw new SearchFailedError(describeRefusal(request, response.status, body));
    try {
      return JSON.parse(body);
    } catch {
      throw new SearchFailedError(`${request.provider} answered something that is not JSON (${describeContentType(response)})`);
    }
  } catch (error) {
    if (request.signal?.aborted) throw error;
    if (error instanceof SearchFailedError) throw new SearchFailedError(redact(error.message, request.secret));
    if (timeout.aborted) throw new SearchFailedError(`${request.provider} did not answer within ${request.timeoutMs} ms`);
    throw new SearchFailedError(
      redact(`could not reach ${request.provider} at ${request.url.origin}: ${describeNetworkError(error)}`, request.secret),
    );
  }
}

async function readBounded(response: Response, provider: string): Promise<string> {
  if (!response.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > MAX_ANSWER_BYTES) {
      await response.body.cancel().catch(() => undefined);
      throw new SearchFailedError(`${provider} answered more than ${MAX_ANSWER_BYTES} bytes; the answer was dropped`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function describeRedirect(request: SearchRequest, response: Response): string {
  let target = 'another address';
  try {
    target = new URL(response.headers.get('location') ?? '', request.url).origin;
  } catch {
    // an unparsable Location: say no more than that it redirected
  }
  return `${request.provider} redirected the request (HTTP ${response.status}) to ${target}; it is not followed, since the request carries the API key: configure the final address as the endpoint`;
}

function describeRefusal(request: SearchRequest, status: number, body: string): string {
  const said = providerMessage(body);
  const detail = said ? `: ${said}` : '';
  if (status === 401 || status === 403) {
    const fix = request.refusalHint ? `; ${request.refusalHint}` : '';
    return `${request.provider} refused the request (HTTP ${status})${detail}${fix}`;
  }
  if (status === 429) return `${request.provider} is rate limiting searches (HTTP 429)${detail}; try again later`;
  return `${request.provider} answered HTTP ${status}${detail}`;
}

// Providers put their reason in different places (Brave: error.detail, Tavily: detail.error,
// SearXNG: an HTML page); a short one is worth showing, a page of markup is not.
function providerMessage(body: string): string {
  let text: string;
  try {
    text = reasonIn(JSON.parse(body)) ?? body;
  } catch {
    if (/^\s*</.test(body)) return '';
    text = body;
  }
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length > 200 ? `${oneLine.slice(0, 199)}…` : oneLine;
}

function reasonIn(node: unknown, depth = 0): string | undefined {
  if (typeof node === 'string') return node;
  if (typeof node !== 'object' || node === null || depth > 2) return undefined;
  const fields = node as Record<string, unknown>;
  for (const key of ['detail', 'message', 'error']) {
    const reason = reasonIn(fields[key], depth + 1);
    if (reason !== undefined) return reason;
  }
  return undefined;
}

function describeContentType(response: Response): string {
  return `content-type ${response.headers.get('content-type') ?? 'not given'}`;
}

function describeNetworkError(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
  if (typeof cause?.code === 'string') return cause.code;
  if (typeof cause?.message === 'string') return cause.message;
  return error instanceof Error ? error.message : String(error);
}

/** The key in every form the vault knows (plain, base64, URL-encoded), as a provider may echo any. */
function redact(message: string, secret: string | undefined): string {
  if (!secret) return message;
  const vault = new SecretVault();
  vault.put('request', { API_KEY: secret });
  return vault.redact('request', message);
}
