import type { Server } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isAbsolute, join } from 'node:path';
import * as protobuf from 'protobufjs';

/** One received span, flattened: ids as hex, attributes (span and events') as plain values. */
export interface ReceivedSpan {
  readonly service: string;
  readonly traceId: string;
  readonly spanId: string;
  /** '' for a root span. */
  readonly parentSpanId: string;
  readonly name: string;
  readonly kind: number;
  readonly attributes: Record<string, unknown>;
  readonly eventAttributes: Record<string, unknown>[];
  readonly statusMessage: string;
}

export interface OtlpReceiver {
  /** The base URL to give as OTEL_EXPORTER_OTLP_ENDPOINT. */
  readonly url: string;
  readonly spans: ReceivedSpan[];
  close(): Promise<void>;
}

type Decoded = { [key: string]: any }; // protobufjs' plain objects

const hex = (bytes: Uint8Array | undefined) => Buffer.from(bytes ?? []).toString('hex');

function plainValue(value: Decoded | undefined): unknown {
  if (!value) return undefined;
  if ('arrayValue' in value) return (value.arrayValue.values ?? []).map(plainValue);
  if ('kvlistValue' in value) return plainAttributes(value.kvlistValue.values);
  if ('bytesValue' in value) return hex(value.bytesValue);
  return value.stringValue ?? value.boolValue ?? value.intValue ?? value.doubleValue;
}

function plainAttributes(pairs: Decoded[] | undefined): Record<string, unknown> {
  return Object.fromEntries((pairs ?? []).map((kv) => [kv.key, plainValue(kv.value)]));
}

/** Where the official OTLP definitions are vendored (proto/opentelemetry/README.md); their imports are relative to it. */
const PROTO_ROOT = join(__dirname, '..', '..', '..', 'proto');

/** The export request and response types, imports resolved under PROTO_ROOT as `protoc -I` would. */
async function loadTraceService(): Promise<protobuf.Root> {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => (isAbsolute(target) ? target : join(PROTO_ROOT, target));
  return root.load(join(PROTO_ROOT, 'opentelemetry/proto/collector/trace/v1/trace_service.proto'));
}

/**
 * An OTLP/HTTP trace receiver (POST /v1/traces, application/x-protobuf), what a collector is to
 * the services: it decodes each export with the official OTLP definitions and keeps the spans.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const root = await loadTraceService();
  const Request = root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest');
  const Response = root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse');
  const spans: ReceivedSpan[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces' || req.headers['content-type'] !== 'application/x-protobuf') {
        res.writeHead(404).end();
        return;
      }
      const request = Request.toObject(Request.decode(Buffer.concat(chunks)), { longs: String, defaults: true }) as Decoded;
      for (const resourceSpans of request.resourceSpans ?? []) {
        const service = String(plainAttributes(resourceSpans.resource?.attributes)['service.name']);
        for (const scopeSpans of resourceSpans.scopeSpans ?? [])
          for (const span of scopeSpans.spans ?? [])
            spans.push({
              service,
              traceId: hex(span.traceId),
              spanId: hex(span.spanId),
              parentSpanId: hex(span.parentSpanId),
              name: span.name,
              kind: span.kind,
              attributes: plainAttributes(span.attributes),
              eventAttributes: (span.events ?? []).map((e: Decoded) => plainAttributes(e.attributes)),
              statusMessage: span.status?.message ?? '',
            });
      }
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end(Buffer.from(Response.encode(Response.create({})).finish()));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
