import { EventSource } from 'eventsource';
import { ALL_EVENT_KINDS } from './sse-client';

export interface BalancedStreamEvent {
  readonly id: number;
  readonly kind: string;
  readonly data: Record<string, unknown>;
}

export interface BalancedStream {
  /** Resolves with every event received, in order, once `done` arrives. */
  readonly events: Promise<BalancedStreamEvent[]>;
  /** How many times the stream was opened, and the Last-Event-ID each reconnect carried. */
  readonly connects: Array<{ readonly origin: string; readonly lastEventId?: string }>;
  close(): void;
}

/**
 * Follows a task's stream the way a browser behind a load balancer does: the real EventSource
 * client, which reconnects by itself with Last-Event-ID when a stream ends early, through a fetch
 * that sends each (re)connect to the next API instance `upstreams()` names, as a balancer sends
 * it to an instance whose /readyz answers. A refused connection or a 503 from an instance already
 * closing is what a balancer retries elsewhere: the client sees a network error and reconnects.
 */
export function followBalanced(upstreams: () => string[], apiKey: string, taskId: string, options: { timeoutMs: number }): BalancedStream {
  const connects: Array<{ origin: string; lastEventId?: string }> = [];
  let next = 0;
  let source: EventSource | undefined;
  const events = new Promise<BalancedStreamEvent[]>((resolve, reject) => {
    const received: BalancedStreamEvent[] = [];
    source = new EventSource(`http://balancer/api/v1/tasks/${taskId}/stream?after=0`, {
      fetch: async (input, init) => {
        const live = upstreams();
        if (live.length === 0) throw new Error('no API instance is up');
        const origin = live[next++ % live.length];
        const headers: Record<string, string> = { ...(init?.headers as Record<string, string>), authorization: `Bearer ${apiKey}` };
        connects.push({ origin, lastEventId: headers['Last-Event-ID'] });
        const response = await fetch(String(input).replace('http://balancer', origin), { ...init, headers });
        if (response.status === 503) throw new Error(`${origin} is closing`);
        return response;
      },
    });
    const timer = setTimeout(() => {
      source?.close();
      reject(new Error(`stream of ${taskId} did not finish in time; got ${received.map((e) => `${e.id}:${e.kind}`).join(', ')}`));
    }, options.timeoutMs);
    for (const kind of ALL_EVENT_KINDS) {
      source.addEventListener(kind, (message) => {
        received.push({
          id: Number(message.lastEventId),
          kind,
          data: (JSON.parse(message.data) as { data: Record<string, unknown> }).data,
        });
        if (kind === 'done') {
          clearTimeout(timer);
          source?.close();
          resolve(received);
        }
      });
    }
    source.onerror = () => {
      if (source?.readyState === EventSource.CLOSED) {
        clearTimeout(timer);
        reject(new Error(`stream of ${taskId} failed for good after ${received.length} events`));
      }
    };
  });
  return { events, connects, close: () => source?.close() };
}
