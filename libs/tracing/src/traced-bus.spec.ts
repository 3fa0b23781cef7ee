import { SpanKind, context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { MessageBus } from '@app/bus';
import { InProcessBus } from '@app/bus/in-process/in-process-bus';
import { inSpan } from './spans';
import { traceBus } from './traced-bus';

describe('traceBus', () => {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  let bus: MessageBus;
  beforeAll(() => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    trace.setGlobalTracerProvider(provider);
  });
  afterAll(async () => {
    await provider.shutdown();
    trace.disable();
    context.disable();
  });
  beforeEach(() => {
    exporter.reset();
    bus = traceBus(new InProcessBus(), 'in-process');
  });
  afterEach(() => bus.close());

  const spans = () =>
    exporter
      .getFinishedSpans()
      .map((s) => ({ name: s.name, kind: s.kind, parent: s.parentSpanId, id: s.spanContext().spanId, attributes: s.attributes }));

  it('makes no span outside a trace: background traffic stays untraced', async () => {
    bus.handle('echo', async (text: string) => text);
    bus.subscribe('fact', () => undefined);
    expect(await bus.request('echo', 'hello')).toBe('hello');
    bus.publish('fact', 'x');
    await new Promise((resolve) => setImmediate(resolve));
    expect(spans()).toEqual([]);
  });

  it('inside a trace, spans each request and its handling under the caller, with the subject and never the payload', async () => {
    bus.handle('echo', async (text: string) => text);
    await inSpan('turn', {}, () => bus.request('echo', 'payload-text'));
    const [handled, request, turn] = spans();
    expect(turn.name).toBe('turn');
    expect(request).toMatchObject({ name: 'bus.request echo', kind: SpanKind.CLIENT, parent: turn.id });
    expect(handled).toMatchObject({ name: 'bus.handle echo', kind: SpanKind.SERVER, parent: request.id });
    expect(request.attributes).toEqual({ 'messaging.system': 'in-process', 'messaging.destination.name': 'echo' });
    expect(JSON.stringify(spans())).not.toContain('payload-text');
  });

  it('inside a trace, spans a published fact and each subscriber receiving it', async () => {
    const heard = new Promise<void>((resolve) => bus.subscribe('fact', () => resolve()));
    await inSpan('turn', {}, async () => bus.publish('fact', { secret: 'payload-value' }));
    await heard;
    const byName = new Map(spans().map((s) => [s.name, s]));
    expect(byName.get('bus.publish fact')).toMatchObject({ kind: SpanKind.PRODUCER, parent: byName.get('turn')!.id });
    expect(byName.get('bus.receive fact')).toMatchObject({ kind: SpanKind.CONSUMER, parent: byName.get('bus.publish fact')!.id });
    expect(JSON.stringify(spans())).not.toContain('payload-value');
  });

  it('records a failed request with the error class only, not its message', async () => {
    bus.handle('fails', async () => {
      throw new TypeError('message quoting a secret');
    });
    await expect(inSpan('turn', {}, () => bus.request('fails', {}))).rejects.toThrow();
    const failed = exporter.getFinishedSpans().find((s) => s.name === 'bus.request fails')!;
    expect(failed.status).toEqual({ code: 2, message: expect.not.stringContaining('secret') });
    expect(failed.events).toEqual([]);
  });
});
