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
    return new Promise<PostResult>((settle) => {
      const exchange = new PostExchange(settle, this.settings.timeoutMs);
      // undici's dispatch rather than its `request`: no body stream, promise or abort signal per
      // POST, a third less CPU for each (BENCHMARKS.md "Webhooks"). Idempotent: the receiver may see
      // a message twice anyway (at least once, one webhook-id), so undici may pipeline it and send
      // it again on a new socket when its socket fails.
      dispatcher.dispatch(
        {
          origin: url.origin,
          path: `${url.pathname}${url.search}`,
          method: 'POST',
          headers: request.headers,
          body: request.body,
          idempotent: true,
        },
        exchange,
      );
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.connections) await Promise.all([this.connections.guarded.close(), this.connections.allowListed.close()]);
  }

  /** undici and the two agents, made at the first POST (loading undici costs about 0.1 s of CPU). */
  private async connect(): Promise<Connections> {
    if (!this.connections) {
      const { Agent } = await import('undici');
      if (this.closed) throw new Error('the webhook sender is closed');
      // Each phase gets the whole bound; the deadline in `post` bounds their sum. No redirect
      // interceptor is installed (undici's default), so a 3xx comes back as an answer.
      const { timeoutMs, maxConnections, pipelining } = this.settings;
      const pool = { headersTimeout: timeoutMs, bodyTimeout: timeoutMs, connections: maxConnections, pipelining };
      // Sockets of `guarded` were all opened through the guarded lookup, so pooling them is safe.
      this.connections ??= {
        guarded: new Agent({ ...pool, connect: { timeout: timeoutMs, lookup: guardedLookup(ALLOW_SETTING) } }),
        allowListed: new Agent({ ...pool, connect: { timeout: timeoutMs } }),
      };
    }
    return this.connections;
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

function timedOut(timeoutMs: number): string {
  return `timed out after ${timeoutMs} ms (the WEBHOOK_TIMEOUT_MS limit)`;
}

// undici's own phase timeouts say the same as the deadline, in its words.
const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

function describeFailure(error: unknown, timeoutMs: number): string {
  if (error instanceof AddressRefusedError) return error.message;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && TIMEOUT_CODES.has(code)) return timedOut(timeoutMs);
  const parts: string[] = [];
  for (let e: unknown = error, depth = 0; e !== undefined && depth < 3; depth++) {
    parts.push(e instanceof Error ? e.message : String(e));
    e = e instanceof Error ? e.cause : undefined;
  }
  return `could not deliver: ${parts.join(': ')}`;
}

/**
 * One POST's side of undici's dispatch protocol: it settles once, with the status or why there is
 * none, when the answer is complete, when the connection fails, or at the deadline, whichever is
 * first (a DNS lookup cannot be cancelled, so the deadline does not wait for one). The answer's
 * body is counted and discarded; past MAX_RESPONSE_BYTES, or still arriving at the deadline, the
 * exchange is aborted, which drops the connection rather than reading on, and the status already
 * received stands.
 */
class PostExchange implements Undici.Dispatcher.DispatchHandlers {
  private abortExchange?: (reason: Error) => void;
  private statusCode?: number;
  private bytesRead = 0;
  private settled = false;
  private readonly deadline: NodeJS.Timeout;

  constructor(
    private readonly settle: (result: PostResult) => void,
    private readonly timeoutMs: number,
  ) {
    // Once the status is in, it is the answer, however slowly the body that follows trickles.
    this.deadline = setTimeout(
      () => this.stop(this.statusCode === undefined ? { error: timedOut(timeoutMs) } : this.answered()),
      timeoutMs,
    );
  }

  onConnect(abort: (reason: Error) => void): void {
    // Called again when undici sends the request anew on another socket (idempotent, pipelined
    // behind one that failed): what the failed socket brought back does not count.
    this.abortExchange = abort;
    this.statusCode = undefined;
    this.bytesRead = 0;
    // A deadline passed while connecting (or before a retry on a new socket): nothing more is sent.
    if (this.settled) abort(new Error('webhook attempt ended'));
  }

  onHeaders(statusCode: number): boolean {
    if (statusCode >= 200) this.statusCode = statusCode; // 1xx answers are interim
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.bytesRead += chunk.length;
    if (this.bytesRead > MAX_RESPONSE_BYTES) this.stop(this.answered());
    return true;
  }

  onComplete(): void {
    this.finish(this.answered());
  }

  onError(error: Error): void {
    this.finish({ error: describeFailure(error, this.timeoutMs) });
  }

  private answered(): PostResult {
    const statusCode = this.statusCode ?? 0;
    const failure = describeStatus(statusCode);
    return failure === undefined ? { statusCode } : { statusCode, error: failure };
  }

  /** Settles and ends the exchange: its socket is dropped if the exchange was still running. */
  private stop(result: PostResult): void {
    if (this.settled) return;
    this.finish(result);
    this.abortExchange?.(new Error('webhook attempt ended'));
  }

  private finish(result: PostResult): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.deadline);
    this.settle(result);
  }
}
