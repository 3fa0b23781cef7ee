import { AddressRefusedError } from '@app/common/network/address-refused.error';
import { checkDestination } from '@app/common/network/allow-hosts';
import { guardedLookup } from '@app/common/network/guarded-lookup';
import type * as Undici from 'undici';

/** What the poster needs to know; plain data, so that it can be handed to a worker thread. */
export interface PosterSettings {
  /** WEBHOOK_TIMEOUT_MS: the most one POST may take, connecting and reading the answer included. */
  readonly timeoutMs: number;
  /** WEBHOOK_ALLOW_HOSTS: `host:port` keys that may be called although they are private or loopback. */
  readonly allowHosts: readonly string[];
  /** WEBHOOK_MAX_CONNECTIONS: sockets open to one receiver origin at most. */
  readonly maxConnections: number;
  /** Requests one socket may carry before their answers are back (1: none waits behind another). */
  readonly pipelining: number;
}

/** One signed POST, ready to go: the headers carry the signature of exactly this body. */
export interface PostRequest {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** The answer's status, and why the attempt failed when it did (a non-2xx status included). */
export interface PostResult {
  readonly statusCode?: number;
  readonly error?: string;
}

/** The most response bytes read: a receiver's answer is only its status; more is not worth reading. */
export const MAX_RESPONSE_BYTES = 64 * 1024;

const ALLOW_SETTING = 'WEBHOOK_ALLOW_HOSTS';

interface Connections {
  readonly request: typeof Undici.request;
  readonly guarded: Undici.Agent;
  readonly allowListed: Undici.Agent;
}

/**
 * Makes single POSTs that connect only to public addresses (or allow-listed `host:port`s), follow
 * no redirect, read at most MAX_RESPONSE_BYTES back and take at most `timeoutMs` in all. It never
 * throws for a failed POST: the result says why. WebhookSender runs it in a worker thread
 * (http-poster.worker.ts), away from the service's busy event loop.
 */
export class HttpPoster {
  private connections?: Connections;
  private closed = false;
  private readonly allowHosts: ReadonlySet<string>;

  constructor(private readonly settings: PosterSettings) {
    this.allowHosts = new Set(settings.allowHosts);
  }

  async post(request: PostRequest): Promise<PostResult> {
    let url: URL;
    let connections: Connections;
    let dispatcher: Undici.Dispatcher;
    try {
      url = new URL(request.url);
      refuseUncallable(url);
      connections = await this.connect();
      dispatcher = checkDestination(url, this.allowHosts, ALLOW_SETTING).allowListed ? connections.allowListed : connections.guarded;
    } catch (error) {
      return { error: (error as Error).message };
    }
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), this.settings.timeoutMs);
    try {
      const response = await untilAborted(
        // Idempotent: the receiver may see a message twice anyway (at least once, one webhook-id),
        // so undici may pipeline it and send it again on a new socket when its socket fails.
        connections.request(url, {
          method: 'POST',
          headers: request.headers,
          body: request.body,
          dispatcher,
          signal: deadline.signal,
          idempotent: true,
        }),
        deadline.signal,
      );
      // Read and discarded so that the connection can serve the next request; past the bound the
      // body is destroyed, which drops the connection rather than reading on. Never rejects on what
      // the receiver sends back. undici's own dump: a third of the CPU of a `for await` over the
      // body, per send (bench/webhook-send-cost.ts).
      await response.body.dump({ limit: MAX_RESPONSE_BYTES }).catch(() => undefined);
      const failure = describeStatus(response.statusCode);
      return failure === undefined ? { statusCode: response.statusCode } : { statusCode: response.statusCode, error: failure };
    } catch (error) {
      return { error: deadline.signal.aborted ? this.timedOut() : describeFailure(error, this.settings.timeoutMs) };
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.connections) await Promise.all([this.connections.guarded.close(), this.connections.allowListed.close()]);
  }

  /** undici and the two agents, made at the first POST (loading undici costs about 0.1 s of CPU). */
  private async connect(): Promise<Connections> {
    if (!this.connections) {
      const { Agent, request } = await import('undici');
      if (this.closed) throw new Error('the webhook sender is closed');
      // Each phase gets the whole bound; the deadline in `post` bounds their sum. No redirect
      // interceptor is installed (undici's default), so a 3xx comes back as an answer.
      const { timeoutMs, maxConnections, pipelining } = this.settings;
      const pool = { headersTimeout: timeoutMs, bodyTimeout: timeoutMs, connections: maxConnections, pipelining };
      // Sockets of `guarded` were all opened through the guarded lookup, so pooling them is safe.
      this.connections ??= {
        request,
        guarded: new Agent({ ...pool, connect: { timeout: timeoutMs, lookup: guardedLookup(ALLOW_SETTING) } }),
        allowListed: new Agent({ ...pool, connect: { timeout: timeoutMs } }),
      };
    }
    return this.connections;
  }

  private timedOut(): string {
    return `timed out after ${this.settings.timeoutMs} ms (the WEBHOOK_TIMEOUT_MS limit)`;
  }
}

function refuseUncallable(url: URL): void {
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new Error(`refused: ${url.protocol} URLs are not called; only http and https`);
  // Creates refuse such URLs already; credentials would travel in the clear next to our signature.
  if (url.username !== '' || url.password !== '') throw new Error('refused: URLs with credentials (user:password@) are not called');
}

function describeStatus(status: number): string | undefined {
  if (status >= 200 && status < 300) return undefined;
  if (status >= 300 && status < 400)
    return `the receiver answered ${status}, a redirect, which is not followed: webhooks go only to the URL given`;
  return `the receiver answered ${status}`;
}

// undici's own phase timeouts say the same as the deadline, in its words.
const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

function describeFailure(error: unknown, timeoutMs: number): string {
  if (error instanceof AddressRefusedError) return error.message;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && TIMEOUT_CODES.has(code)) return `timed out after ${timeoutMs} ms (the WEBHOOK_TIMEOUT_MS limit)`;
  const parts: string[] = [];
  for (let e: unknown = error, depth = 0; e !== undefined && depth < 3; depth++) {
    parts.push(e instanceof Error ? e.message : String(e));
    e = e instanceof Error ? e.cause : undefined;
  }
  return `could not deliver: ${parts.join(': ')}`;
}

/**
 * Settles when `work` does or the signal fires, whichever is first: undici notices an abort only
 * once a connection exists, and a DNS lookup cannot be cancelled at all.
 */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
