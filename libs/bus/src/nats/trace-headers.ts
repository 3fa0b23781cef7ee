import { NatsRecord } from '@nestjs/microservices';
import { ROOT_CONTEXT, context, propagation } from '@opentelemetry/api';
import type { MsgHdrs } from 'nats';
import { headers as natsHeaders } from 'nats';

/**
 * The payload with the active trace context in its message's headers (W3C `traceparent`,
 * `tracestate`), so the handler in another process continues the caller's trace. Outside a
 * trace, or with tracing off (no propagator registered), the payload goes as it is.
 */
export function withTraceHeaders<T>(payload: T): T | NatsRecord<T> {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  const keys = Object.keys(carrier);
  if (keys.length === 0) return payload;
  const headers = natsHeaders();
  for (const key of keys) headers.set(key, carrier[key]);
  return new NatsRecord(payload, headers);
}

/** Runs `fn` in the trace context a message carried, if any; otherwise in none (never the context of whatever ran before). */
export function inTraceOf<T>(headers: MsgHdrs | undefined, fn: () => T): T {
  if (!headers) return context.with(ROOT_CONTEXT, fn);
  const carried = propagation.extract(ROOT_CONTEXT, headers, {
    get: (h, key) => h.get(key) || undefined,
    keys: (h) => h.keys(),
  });
  return context.with(carried, fn);
}
