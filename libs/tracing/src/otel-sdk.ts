import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { Resource } from '@opentelemetry/resources';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';

/** The SDK as a process runs it: what Temporal's workflow span sink needs, and how to stop. */
export interface OtelSdk {
  readonly resource: Resource;
  readonly spanProcessor: SpanProcessor;
  shutdown(): Promise<void>;
}

/**
 * Registers the global tracer provider, the async-hooks context manager (the active span follows
 * awaits) and the W3C trace context propagator, exporting batches over OTLP/HTTP protobuf. Only
 * loaded when tracing is on (start-tracing.ts): the SDK and exporter cost start time and memory.
 */
export function startOtelSdk(serviceName: string, url: string): OtelSdk {
  const resource = new Resource({ [ATTR_SERVICE_NAME]: serviceName });
  // OTEL_BSP_SCHEDULE_DELAY and the other OTEL_BSP_* variables are read by the processor itself.
  const spanProcessor = new BatchSpanProcessor(new OTLPTraceExporter({ url }));
  const provider = new BasicTracerProvider({ resource, spanProcessors: [spanProcessor] });
  // The SDK's own registration. NodeTracerProvider (@opentelemetry/sdk-trace-node, not installed)
  // adds only the making of this context manager and the B3 and Jaeger propagators, unused here.
  // The propagator is named: left to OTEL_PROPAGATORS, the default would add W3C baggage.
  provider.register({ contextManager: new AsyncLocalStorageContextManager().enable(), propagator: new W3CTraceContextPropagator() });
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
