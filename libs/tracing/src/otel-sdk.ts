import { context, propagation, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { Resource } from '@opentelemetry/resources';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';

/** The SDK as a process runs it: what Temporal's workflow span sink needs, and how to stop. */
export interface OtelSdk {
  readonly resource: Resource;
  readonly spanProcessor: SpanProcessor;
  shutdown(): Promise<void>;
}

/**
 * Registers the global tracer provider, the AsyncLocalStorage context manager (the active span
 * follows awaits) and the W3C trace context propagator, exporting batches over OTLP/HTTP protobuf.
 * Only loaded when tracing is on (start-tracing.ts): the SDK and exporter cost start time and memory.
 */
export function startOtelSdk(serviceName: string, url: string): OtelSdk {
  const resource = new Resource({ [ATTR_SERVICE_NAME]: serviceName });
  // OTEL_BSP_SCHEDULE_DELAY and the other OTEL_BSP_* variables are read by the processor itself.
  const spanProcessor = new BatchSpanProcessor(new OTLPTraceExporter({ url }));
  const provider = new NodeTracerProvider({ resource, spanProcessors: [spanProcessor] });
  // The SDK's own registration: the global provider, its AsyncLocalStorage context manager
  // (enabled) and the propagator. That one is named: left to OTEL_PROPAGATORS, the default would
  // add W3C baggage.
  provider.register({ propagator: new W3CTraceContextPropagator() });
  return {
    resource,
    spanProcessor,
    async shutdown() {
      // Exports what is still batched, then leaves the process as it was: no-op tracing.
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}
