import type { MessageBus, Unsubscribe } from '../bus.port';
import { BusTimeoutError, DEFAULT_REQUEST_TIMEOUT_MS, NoHandlerError, RemoteError } from '../bus.port';

type Handler = (payload: unknown) => Promise<unknown>;

/**
 * The all-in-one mode's bus. Payloads are cloned so that no service can mutate another's
 * objects, which keeps the code honest about what a network bus would carry.
 */
export class InProcessBus implements MessageBus {
  private readonly handlers = new Map<string, Handler[]>();
  private readonly subscribers = new Map<string, Set<(payload: unknown) => void>>();
  private roundRobin = 0;
  private closed = false;

  async request<Req, Res>(subject: string, payload: Req, options?: { timeoutMs?: number }): Promise<Res> {
    if (this.closed) throw new Error('bus is closed');
    const candidates = this.handlers.get(subject);
    if (!candidates?.length) throw new NoHandlerError(subject);
    const handler = candidates[this.roundRobin++ % candidates.length];
    const timeoutMs = options?.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new BusTimeoutError(subject, timeoutMs)), timeoutMs);
    });
    try {
      const reply = await Promise.race([handler(structuredClone(payload)), timeout]);
      return structuredClone(reply) as Res;
    } catch (error) {
      if (error instanceof BusTimeoutError) throw error;
      const e = error as { code?: string; message?: string };
      // Same process: the handler's own error stays reachable as the cause (NATS can carry only code and message).
      throw new RemoteError(subject, e.code ?? 'INTERNAL', e.message ?? String(error), { cause: error });
    } finally {
      clearTimeout(timer);
    }
  }

  handle<Req, Res>(subject: string, handler: (payload: Req) => Promise<Res>): Unsubscribe {
    const list = this.handlers.get(subject) ?? [];
    const entry = handler as Handler;
    this.handlers.set(subject, [...list, entry]);
    return () =>
      this.handlers.set(
        subject,
        (this.handlers.get(subject) ?? []).filter((h) => h !== entry),
      );
  }

  publish<T>(subject: string, payload: T): void {
    for (const subscriber of this.subscribers.get(subject) ?? []) {
      const copy = structuredClone(payload);
      queueMicrotask(() => {
        try {
          subscriber(copy);
        } catch {
          // A failing subscriber must not affect the publisher or other subscribers.
        }
      });
    }
  }

  subscribe<T>(subject: string, handler: (payload: T) => void): Unsubscribe {
    const set = this.subscribers.get(subject) ?? new Set();
    const entry = handler as (payload: unknown) => void;
    set.add(entry);
    this.subscribers.set(subject, set);
    return () => set.delete(entry);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.handlers.clear();
    this.subscribers.clear();
  }
}
