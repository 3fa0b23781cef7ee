import { Readable } from 'node:stream';
import type { PromData, PromHistogramData } from 'prom2javascript';
import { getMetricsFromStream } from 'prom2javascript';
import type { StoredEvent } from '@app/event-store';
import { ServiceMetrics } from './service-metrics';
import { recordTaskEvents } from './task-event-metrics';

let revision = 0;
const event = (type: string, data: Record<string, unknown>, recordedAt = '2026-01-01T00:00:00.000Z'): StoredEvent => ({
  streamId: 'task-t1',
  revision: ++revision,
  globalPosition: revision,
  type,
  data,
  schemaVersion: 1,
  recordedAt,
});

describe('recordTaskEvents', () => {
  let metrics: ServiceMetrics;
  beforeEach(() => (metrics = new ServiceMetrics()));
  const families = async () => getMetricsFromStream(Readable.from([(await metrics.exposition()).body]));
  const counter = async (name: string) =>
    Object.fromEntries(((await families())[name].data as PromData[]).map((d) => [d.labels.outcome ?? '', d.value]));

  it('counts turns started and how they ended; a cancel ends a turn only when one was running', async () => {
    const started = event('TurnStarted', { turn: 1 });
    recordTaskEvents(metrics, [], [started]);
    recordTaskEvents(metrics, [started], [event('TurnCompleted', { turn: 1 })]);
    recordTaskEvents(metrics, [started], [event('TaskFailed', { turn: 1, error: 'x' })]);
    recordTaskEvents(metrics, [started], [event('TaskCancelled', { turn: 1, droppedMessageIds: [] })]);
    recordTaskEvents(metrics, [started, event('TurnCompleted', { turn: 1 })], [event('TaskCancelled', { turn: 1, droppedMessageIds: [] })]);
    expect(await counter('ats_turns_started_total')).toEqual({ '': 1 });
    expect(await counter('ats_turns_finished_total')).toEqual({ completed: 1, failed: 1, cancelled: 1 });
  });

  it('observes how long each approval waited, by outcome, from the request recorded in the history', async () => {
    const history = [
      event('ToolCallRequested', { callId: 'c1' }, '2026-01-01T00:00:00.000Z'),
      event('ToolCallRequested', { callId: 'c2' }, '2026-01-01T00:00:10.000Z'),
    ];
    recordTaskEvents(metrics, history, [event('ToolCallDecided', { callId: 'c1', outcome: 'proceed_once' }, '2026-01-01T00:00:02.500Z')]);
    recordTaskEvents(metrics, history, [event('ToolCallApprovalExpired', { callId: 'c2' }, '2026-01-01T01:00:10.000Z')]);
    const waits = ((await families()).ats_approval_wait_seconds.data as PromHistogramData[]).map((d) => [d.labels.outcome, d.sum, d.count]);
    expect(waits).toEqual([
      ['proceed_once', 2.5, 1],
      ['expired', 3600, 1],
    ]);
  });

  it('sums the cost of priced model calls by tenant, and counts unpriced calls by model', async () => {
    const created = event('TaskCreated', { tenantId: 'acme' });
    const responded = (model: string, costUsd: number | null) => event('ModelResponded', { model, usage: { totalTokens: 1, costUsd } });
    recordTaskEvents(metrics, [], [created, responded('gpt-4o', 0.25)]);
    recordTaskEvents(metrics, [created], [responded('gpt-4o', 0.5), responded('local', null)]);
    const byLabel = async (name: string, label: string) =>
      Object.fromEntries(((await families())[name].data as PromData[]).map((d) => [d.labels[label], d.value]));
    expect(await byLabel('ats_model_cost_usd_total', 'tenant')).toEqual({ acme: 0.75 });
    expect(await byLabel('ats_model_calls_unpriced_total', 'model')).toEqual({ local: 1 });
  });

  it("counts nothing of a fork's copy of its source's history, only the turn it starts after it", async () => {
    const copy = [
      event('TaskCreated', {}),
      event('TaskForked', { taskId: 'grand-source', eventId: 1, autoExecute: true }),
      event('TurnStarted', { turn: 1 }),
      event('ToolCallRequested', { callId: 'c1' }),
      event('ToolCallDecided', { callId: 'c1', outcome: 'proceed_once' }),
      event('TurnCompleted', { turn: 1 }),
      event('TaskForked', { taskId: 'source', eventId: 5, autoExecute: true }),
    ];
    recordTaskEvents(metrics, [], [...copy, event('UserMessageAdded', {}), event('TurnStarted', { turn: 2 })]);
    expect(await counter('ats_turns_started_total')).toEqual({ '': 1 });
    expect((await families()).ats_turns_finished_total.data).toEqual([]);
    expect(((await families()).ats_approval_wait_seconds.data as PromHistogramData[]).every((d) => d.count === 0)).toBe(true);
  });

  it("counts a fork's running turn as started once: at the fork, or when it is resumed", async () => {
    const running = [event('TaskCreated', {}), event('TurnStarted', { turn: 1 })];
    recordTaskEvents(metrics, [], [...running, event('TaskForked', { taskId: 'source', eventId: 2, autoExecute: true })]);
    expect(await counter('ats_turns_started_total')).toEqual({ '': 1 });
    const waiting = event('TaskForked', { taskId: 'source', eventId: 2, autoExecute: true, resumes: { turn: 1, messageId: 'm1' } });
    recordTaskEvents(metrics, [], [...running, waiting]);
    expect(await counter('ats_turns_started_total')).toEqual({ '': 1 });
    recordTaskEvents(metrics, [...running, waiting], [event('TurnResumed', { turn: 1, messageId: 'm1' })]);
    expect(await counter('ats_turns_started_total')).toEqual({ '': 2 });
  });
});
