import { AddressRefusedError, checkDestination, guardedLookup } from '@app/common';
import type * as Undici from 'undici';
import { signWebhook } from './sign';
import { AttemptOutcome } from './webhook-attempt';

/** The settings the sender reads; WebhookConfig has them. */
export interface WebhookSenderSettings {
  readonly timeoutMs: number;
  readonly allowHosts: ReadonlySet<string>;
}

/** One message to attempt: the same `id` and `body` on every attempt. */
export interface WebhookMessage {
  readonly id: string;
  readonly url: URL;
  /** The JSON body, sent byte for byte as it is signed. */
  readonly body: string;
}

interface Connections {
  readonly request: typeof Undici.request;
  readonly guarded: Undici.Agent;
  readonly allowListed: Undici.Agent;
}

/** The most response bytes read: a receiver's answer is only its status; more is not worth reading. */
export const MAX_RESPONSE_BYTES = 64 * 1024;

const ALLOW_SETTING = 'WEBHOOK_ALLOW_HOSTS';

/**
 * Makes single delivery attempts: a signed POST that connects only to public addresses (or
 * allow-listed `host:port`s), follows no redirect, reads at most MAX_RESPONSE_BYTES back and takes
 * at most WEBHOOK_TIMEOUT_MS in all. It never throws for a failed attempt: it says why in the record.
 */
export class WebhookSender {
  private connections?: Connections;
  private closed = false;

  constructor(
    private readonly settings: WebhookSenderSettings,
    private readonly signingKey: Uint8Array,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async send(message: WebhookMessage): Promise<AttemptOutcome> {
    const startedAt = this.now();
    const started = performance.now();
    const outcome = (result: { statusCode?: number; error?: string }): AttemptOutcome => ({
      attempt: { at: startedAt.toISOString(), ...result, durationMs: Math.round(performance.now() - started) },
      delivered: result.error === undefined,
    });
    let dispatcher: Undici.Dispatcher;
    let request: typeof Undici.request;
    try {
      const connections = await this.connectionsFor(message.url);
      ({ request } = connections);
      dispatcher = this.dispatcherFor(message.url, connections);
    } catch (error) {
      return outcome({ error: (error as Error).message });
    }
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'agentic-task-service webhooks',
      ...signWebhook(this.signingKey, message.id, startedAt, message.body),
    };
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), this.settings.timeoutMs);
    try {
      const response = await untilAborted(
        request(message.url, { method: 'POST', headers, body: message.body, dispatcher, signal: deadline.signal }),
        deadline.signal,
      );
      // Read and discarded so that the connection can serve the next request; past the bound the
      // body is destroyed, which drops the connection rather than reading on. Never rejects on what
      // the receiver sends back. undici's own dump: a third of the CPU of a `for await` over the
      // body, per send (bench/webhook-send-cost.ts).
      await response.body.dump({ limit: MAX_RESPONSE_BYTES }).catch(() => undefined);
      const failure = describeStatus(response.statusCode);
      return outcome(failure === undefined ? { statusCode: response.statusCode } : { statusCode: response.statusCode, error: failure });
    } catch (error) {
      return outcome({ error: deadline.signal.aborted ? this.timedOut() : describeFailure(error, this.settings.timeoutMs) });
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.connections) await Promise.all([this.connections.guarded.close(), this.connections.allowListed.close()]);
  }

  /**
   * undici and the two agents, made at the first attempt: loading undici costs every start about
   * 0.1 s of CPU, and most services never send a webhook (BENCHMARKS.md, "Footprint").
   */
  private async connectionsFor(url: URL): Promise<Connections> {
    this.refuseUncallable(url);
    if (!this.connections) {
      const { Agent, request } = await import('undici');
      if (this.closed) throw new Error('the webhook sender is closed');
      // Each phase gets the whole bound; the deadline in `send` bounds their sum. No redirect
      // interceptor is installed (undici's default), so a 3xx comes back as an answer.
      const { timeoutMs } = this.settings;
      const timeouts = { headersTimeout: timeoutMs, bodyTimeout: timeoutMs };
      // Sockets of `guarded` were all opened through the guarded lookup, so pooling them is safe.
      this.connections ??= {
        request,
        guarded: new Agent({ ...timeouts, connect: { timeout: timeoutMs, lookup: guardedLookup(ALLOW_SETTING) } }),
        allowListed: new Agent({ ...timeouts, connect: { timeout: timeoutMs } }),
      };
    }
    return this.connections;
  }

  private refuseUncallable(url: URL): void {
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new Error(`refused: ${url.protocol} URLs are not called; only http and https`);
    // Creates refuse such URLs already; credentials would travel in the clear next to our signature.
    if (url.username !== '' || url.password !== '') throw new Error('refused: URLs with credentials (user:password@) are not called');
  }

  private dispatcherFor(url: URL, connections: Connections): Undici.Dispatcher {
    return checkDestination(url, this.settings.allowHosts, ALLOW_SETTING).allowListed ? connections.allowListed : connections.guarded;
  }

  private timedOut(): string {
    return `timed out after ${this.settings.timeoutMs} ms (the WEBHOOK_TIMEOUT_MS limit)`;
  }
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
