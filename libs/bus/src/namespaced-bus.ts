import type { MessageBus, Unsubscribe } from './bus.port';

/** A namespace is dotted words: letters, digits, `_` and `-`. */
export const BUS_NAMESPACE = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;

/**
 * Puts every subject under `<namespace>.`, so deployments sharing one NATS (staging and
 * production, or test runs) never answer each other's commands or hear each other's facts.
 */
export class NamespacedBus implements MessageBus {
  constructor(
    private readonly inner: MessageBus,
    private readonly namespace: string,
  ) {
    if (!BUS_NAMESPACE.test(namespace))
      throw new Error(`invalid bus namespace "${namespace}": use dotted words of letters, digits, _ and -`);
  }

  request<Req, Res>(subject: string, payload: Req, options?: { timeoutMs?: number }): Promise<Res> {
    return this.inner.request(this.scoped(subject), payload, options);
  }

  handle<Req, Res>(subject: string, handler: (payload: Req) => Promise<Res>): Unsubscribe {
    return this.inner.handle(this.scoped(subject), handler);
  }

  publish<T>(subject: string, payload: T): void {
    this.inner.publish(this.scoped(subject), payload);
  }

  subscribe<T>(subject: string, handler: (payload: T) => void): Unsubscribe {
    return this.inner.subscribe(this.scoped(subject), handler);
  }

  async ping(): Promise<void> {
    await this.inner.ping?.();
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  private scoped(subject: string): string {
    return `${this.namespace}.${subject}`;
  }
}
