import { Readable } from 'node:stream';
import type { PromData, PromHistogramData } from 'prom2javascript';
import { getMetricsFromStream } from 'prom2javascript';
import { ServiceMetrics } from './service-metrics';

const parse = async (metrics: ServiceMetrics) => getMetricsFromStream(Readable.from([(await metrics.exposition()).body]));

describe('ServiceMetrics', () => {
  it('lets two applications in one process each have the full set (no duplicate registration)', async () => {
    const first = new ServiceMetrics();
    const second = new ServiceMetrics();
    first.turnsStarted.inc();
    expect((await parse(first)).ats_turns_started_total.data).toEqual([{ labels: {}, value: 1 }]);
    expect((await parse(second)).ats_turns_started_total.data).toEqual([{ labels: {}, value: 0 }]);
  });

  it('exposes the text format a Prometheus parser reads, histograms with their labels, sum and count', async () => {
    const metrics = new ServiceMetrics();
    metrics.toolRunDuration.observe({ tool: 'shell', status: 'success' }, 0.2);
    metrics.toolRunDuration.observe({ tool: 'shell', status: 'success' }, 3);
    const { contentType } = await metrics.exposition();
    expect(contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    const [series] = (await parse(metrics)).ats_tool_run_duration_seconds.data as PromHistogramData[];
    expect(series).toMatchObject({ labels: { tool: 'shell', status: 'success' }, count: 2, sum: 3.2 });
    expect(series.buckets['0.25']).toBe(1);
    expect(series.buckets['+Inf']).toBe(2);
  });

  it('puts a bus request that ran to the default 600 s tool timeout in a finite bucket, not only in +Inf', async () => {
    const metrics = new ServiceMetrics();
    const labels = { subject: 'sandbox.command.execute_tool', outcome: 'timeout' };
    metrics.busRequestDuration.observe(labels, 600.2);
    const [series] = (await parse(metrics)).ats_bus_request_duration_seconds.data as PromHistogramData[];
    // The finite buckets that counted it: none while the top one was 300 s.
    const holding = Object.entries(series.buckets).filter(([le, count]) => le !== '+Inf' && count > 0);
    expect(holding.length).toBeGreaterThan(0);
    expect(series.buckets['600']).toBe(0);
  });

  it('puts a tool run that ran to the default 600 s tool timeout in a finite bucket, not only in +Inf', async () => {
    const metrics = new ServiceMetrics();
    metrics.toolRunDuration.observe({ tool: 'shell', status: 'error' }, 599.8);
    metrics.toolRunDuration.observe({ tool: 'shell', status: 'error' }, 600.2);
    const [series] = (await parse(metrics)).ats_tool_run_duration_seconds.data as PromHistogramData[];
    // While the top bucket was 300 s both were counted only in +Inf.
    expect(series.buckets['300']).toBe(0);
    expect(series.buckets['600']).toBe(1);
    expect(series.buckets['900']).toBe(2);
    expect(series.buckets['+Inf']).toBe(2);
  });

  it('reads tasks by status and live sandboxes from their sources at scrape time, every status listed', async () => {
    const metrics = new ServiceMetrics();
    let running = 1;
    metrics.countTasksWith(() => new Map([['running', running]]));
    metrics.countSandboxesWith(() => running + 1);
    running = 3;
    const families = await parse(metrics);
    const tasks = Object.fromEntries((families.ats_tasks.data as PromData[]).map((d) => [d.labels.status, d.value]));
    expect(tasks).toEqual({ pending: 0, running: 3, awaiting_approval: 0, completed: 0, failed: 0, cancelled: 0 });
    expect(families.ats_sandboxes_live.data).toEqual([{ labels: {}, value: 4 }]);
  });

  it("exposes Node's process metrics beside ours: CPU, memory, heap, event loop delay", async () => {
    const families = await parse(new ServiceMetrics());
    expect(families.process_cpu_seconds_total.type).toBe('counter');
    expect((families.process_cpu_seconds_total.data as PromData[])[0].value).toBeGreaterThan(0);
    expect((families.process_resident_memory_bytes.data as PromData[])[0].value).toBeGreaterThan(0);
    expect((families.nodejs_heap_size_used_bytes.data as PromData[])[0].value).toBeGreaterThan(0);
    expect(families.nodejs_eventloop_lag_p99_seconds.type).toBe('gauge');
  });

  it('leaves out a sample that reads NaN (no event loop delay sampled since the last scrape) so that strict parsers read the rest', async () => {
    const metrics = new ServiceMetrics();
    const [first, second] = [await metrics.exposition(), await metrics.exposition()];
    for (const { body } of [first, second]) expect(body).not.toMatch(/ Nan$/im);
    await expect(parse(metrics)).resolves.toHaveProperty('process_cpu_seconds_total');
  });
});
