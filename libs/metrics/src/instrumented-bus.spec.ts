import { Readable } from 'node:stream';
import type { PromHistogramData } from 'prom2javascript';
import { getMetricsFromStream } from 'prom2javascript';
import type { MessageBus } from '@app/bus';
import { InProcessBus } from '@app/bus/in-process/in-process-bus';
import { SUBJECTS } from '@app/contracts';
import { instrumentBus, subjectLabel } from './instrumented-bus';
import { ServiceMetrics } from './service-metrics';

describe('instrumentBus', () => {
  let metrics: ServiceMetrics;
  let bus: MessageBus;
  beforeEach(() => {
    metrics = new ServiceMetrics();
    bus = instrumentBus(new InProcessBus(), metrics);
  });
  afterEach(() => bus.close());

  const series = async () => {
    const families = await getMetricsFromStream(Readable.from([(await metrics.exposition()).body]));
    return (families.ats_bus_request_duration_seconds.data as PromHistogramData[]).map((d) => ({ ...d.labels, count: d.count }));
  };

  it('times requests by subject and outcome, and still carries them', async () => {
    bus.handle(SUBJECTS.artifactsList, async (n: number) => n + 1);
    expect(await bus.request(SUBJECTS.artifactsList, 1)).toBe(2);
    await expect(bus.request('nobody.listens', 1)).rejects.toThrow();
    expect(await series()).toEqual([
      { subject: 'artifacts.query.list', outcome: 'ok', count: 1 },
      { subject: 'nobody.listens', outcome: 'error', count: 1 },
    ]);
  });

  it('labels a timeout as such', async () => {
    bus.handle(SUBJECTS.artifactsLocate, () => new Promise(() => undefined));
    await expect(bus.request(SUBJECTS.artifactsLocate, {}, { timeoutMs: 20 })).rejects.toThrow(/no reply/);
    expect(await series()).toEqual([{ subject: 'artifacts.query.locate', outcome: 'timeout', count: 1 }]);
  });

  it('collapses one instance’s own subjects into one label', () => {
    expect(subjectLabel(SUBJECTS.sandboxInstanceExecuteTool('sbx0123abcd'))).toBe('sandbox.instance.*.execute_tool');
    expect(subjectLabel(SUBJECTS.sandboxExecuteTool)).toBe('sandbox.command.execute_tool');
  });
});
