import { signWebhook } from './sign';
import { WorkerPoster } from './sending/worker-poster';
import type { AttemptOutcome } from './webhook-attempt';

export { MAX_RESPONSE_BYTES } from './sending/http-poster';

/** The settings the sender reads; WebhookConfig has them. */
export interface WebhookSenderSettings {
  readonly timeoutMs: number;
  readonly allowHosts: ReadonlySet<string>;
  /** Sockets open to one receiver origin at most (WEBHOOK_MAX_CONNECTIONS). */
  readonly maxConnections: number;
}

/** One message to attempt: the same `id` and `body` on every attempt. */
export interface WebhookMessage {
  readonly id: string;
  readonly url: URL;
  /** The JSON body, sent byte for byte as it is signed. */
  readonly body: string;
}

/**
 * Requests one socket carries before their answers are back, once every socket to a receiver is
 * busy: a burst of a hundred messages goes out in a few writes instead of waiting for answers,
 * which halves the CPU per message on both ends (BENCHMARKS.md "Webhooks"). A receiver that is
 * sent one message at a time gets one request per socket at a time. 4 sockets of 32 bound what
 * one slow answer can hold up behind it.
 */
const PIPELINING = 32;

/**
 * Makes single delivery attempts: signs the message (Standard Webhooks), and has a worker thread
 * POST it (sending/http-poster.ts: public addresses or allow-listed `host:port`s only, no
 * redirect followed, at most MAX_RESPONSE_BYTES read back, WEBHOOK_TIMEOUT_MS in all). It never
 * throws for a failed attempt: it says why in the record.
 */
export class WebhookSender {
  private readonly poster: WorkerPoster;

  constructor(
    settings: WebhookSenderSettings,
    private readonly signingKey: Uint8Array,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.poster = new WorkerPoster({
      timeoutMs: settings.timeoutMs,
      allowHosts: [...settings.allowHosts],
      maxConnections: settings.maxConnections,
      pipelining: PIPELINING,
    });
  }

  async send(message: WebhookMessage): Promise<AttemptOutcome> {
    const startedAt = this.now();
    const started = performance.now();
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'agentic-task-service webhooks',
      ...signWebhook(this.signingKey, message.id, startedAt, message.body),
    };
    const { statusCode, error } = await this.poster.post({ url: message.url.href, headers, body: message.body });
    return {
      attempt: {
        at: startedAt.toISOString(),
        ...(statusCode === undefined ? {} : { statusCode }),
        ...(error === undefined ? {} : { error }),
        durationMs: Math.round(performance.now() - started),
      },
      delivered: error === undefined,
    };
  }

  close(): Promise<void> {
    return this.poster.close();
  }
}
