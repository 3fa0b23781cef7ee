import { SpanKind } from '@opentelemetry/api';
import type { MessageBus } from '@app/bus';
import { ATTR, inSpan, inSpanSync, inTrace } from './spans';

/**
 * The bus with a span per request, handled request, published and received fact, each only
 * inside a trace already under way (a turn's): the background traffic of the services (append
 * notices of other work, polls) makes no traces of its own. The adapter carries the context
 * between processes (NATS headers); payloads never become attributes. `system` names the adapter
 * (`nats`, `in-process`).
 */
export function traceBus(bus: MessageBus, system: string): MessageBus {
  const attributes = (subject: string) => ({ [ATTR.messagingSystem]: system, [ATTR.subject]: subject });
  return {
    request: <Req, Res>(subject: string, payload: Req, options?: { timeoutMs?: number }): Promise<Res> =>
      inTrace()
        ? inSpan(`bus.request ${subject}`, { kind: SpanKind.CLIENT, attributes: attributes(subject) }, () =>
            bus.request<Req, Res>(subject, payload, options),
          )
        : bus.request<Req, Res>(subject, payload, options),
    handle: <Req, Res>(subject: string, handler: (payload: Req) => Promise<Res>) =>
      bus.handle<Req, Res>(subject, (payload) =>
        inTrace()
          ? inSpan(`bus.handle ${subject}`, { kind: SpanKind.SERVER, attributes: attributes(subject) }, () => handler(payload))
          : handler(payload),
      ),
    publish: <T>(subject: string, payload: T) =>
      inTrace()
        ? inSpanSync(`bus.publish ${subject}`, { kind: SpanKind.PRODUCER, attributes: attributes(subject) }, () =>
            bus.publish(subject, payload),
          )
        : bus.publish(subject, payload),
    subscribe: <T>(subject: string, handler: (payload: T) => void) =>
      bus.subscribe<T>(subject, (payload) =>
        inTrace()
          ? inSpanSync(`bus.receive ${subject}`, { kind: SpanKind.CONSUMER, attributes: attributes(subject) }, () => handler(payload))
          : handler(payload),
      ),
    close: () => bus.close(),
    ...(bus.ping ? { ping: () => bus.ping!() } : {}),
  };
}
