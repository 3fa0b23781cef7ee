import type { MessageBus } from '@app/bus';
import { BusTimeoutError } from '@app/bus';
import type { ServiceMetrics } from './service-metrics';
import { secondsSince } from './service-metrics';

/** A subject as a label: one instance's own subjects (`sandbox.instance.<id>.…`) collapse to one value. */
export function subjectLabel(subject: string): string {
  return subject.replace(/^sandbox\.instance\.[^.]+\./, 'sandbox.instance.*.');
}

/** The bus with its requests timed by subject and outcome; handlers, facts and close pass straight through. */
export function instrumentBus(bus: MessageBus, metrics: ServiceMetrics): MessageBus {
  return {
    request: async <Req, Res>(subject: string, payload: Req, options?: { timeoutMs?: number }): Promise<Res> => {
      const startedAt = performance.now();
      let outcome = 'ok';
      try {
        return await bus.request<Req, Res>(subject, payload, options);
      } catch (error) {
        outcome = error instanceof BusTimeoutError ? 'timeout' : 'error';
        throw error;
      } finally {
        metrics.busRequestDuration.observe({ subject: subjectLabel(subject), outcome }, secondsSince(startedAt));
      }
    },
    handle: (subject, handler) => bus.handle(subject, handler),
    publish: (subject, payload) => bus.publish(subject, payload),
    subscribe: (subject, handler) => bus.subscribe(subject, handler),
    close: () => bus.close(),
    ...(bus.ping ? { ping: () => bus.ping!() } : {}),
  };
}
