import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { taskStreamId } from '@app/common';
import type { EventStore } from '@app/event-store';
import { createEmbeddedEventStore } from '@app/event-store/embedded/embedded-event-store';
import type { TaskEvent } from '@app/task-domain';
import { TASK_EVENT_SCHEMA_VERSIONS, toTaskEvent } from '@app/task-domain';
import { toWebhookDeliveryEvent } from '../deliveries/delivery-event.decoder';
import {
  WEBHOOK_ATTEMPTED,
  WEBHOOK_ATTEMPT_STARTED,
  WEBHOOK_EVENT_SCHEMA_VERSION,
  WEBHOOK_REDELIVERY_REQUESTED,
  webhookStreamId,
} from '../deliveries/delivery.events';
import { TaskWebhookOutbox } from './task-webhook-outbox';
import { webhookMessageId, webhookMessagesOf } from './webhook-messages';
import { readTaskWebhookOutbox, readWebhookOutbox } from './webhook-outbox.reader';

const TASK = 'task_0123456789abcdef0123456789abcdef';
const OTHER = 'task_fedcba9876543210fedcba9876543210';
const AT = '2026-11-26T00:00:00.000Z';

const created = (taskId: string, webhookUrl?: string): TaskEvent => ({
  type: 'TaskCreated',
  data: {
    taskId,
    tenantId: 't',
    messageId: 'msg_1',
    text: 'hi',
    autoExecute: false,
    showInHistory: true,
    env: {},
    secretNames: ['TOKEN'],
    files: [],
    ...(webhookUrl ? { webhookUrl, webhookUrlIsDefault: true } : {}),
  },
});
const asks = (callId: string, step: number): TaskEvent => ({
  type: 'ToolCallRequested',
  data: { turn: 1, step, callId, toolName: 'shell', args: { command: 'ls' }, status: 'awaiting_approval' },
});

describe('TaskWebhookOutbox kept from the store feed', () => {
  let dataDir: string;
  let store: EventStore;

  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'task-webhook-outbox-'));
    store = await createEmbeddedEventStore({ dataDir });
  });
  afterEach(async () => {
    await store.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  const appendTask = (taskId: string, events: TaskEvent[]) =>
    store.appendToStream(
      taskStreamId(taskId),
      events.map((e) => ({ type: e.type, data: e.data, schemaVersion: TASK_EVENT_SCHEMA_VERSIONS[e.type] })),
      'any',
    );
  const appendDelivery = (type: string, data: Record<string, unknown>) =>
    store.appendToStream(webhookStreamId(TASK), [{ type, data, schemaVersion: WEBHOOK_EVENT_SCHEMA_VERSION }], 'any');

  it('agrees with a fresh read of both streams after every append, whatever the events', async () => {
    // Kept as the dispatcher keeps it: started by TaskCreated, then every event the feed hands over, once, in order.
    const kept = new TaskWebhookOutbox(TASK);
    const outcomes: string[] = [];
    const unsubscribe = store.onAppended((events) => {
      for (const e of events) {
        if (e.streamId === taskStreamId(TASK) || e.streamId === webhookStreamId(TASK)) outcomes.push(kept.apply(e));
      }
    });
    const first = webhookMessageId(TASK, 3);
    const steps: (() => Promise<unknown>)[] = [
      () =>
        appendTask(TASK, [created(TASK, 'https://hooks.example.com/x'), { type: 'TurnStarted', data: { turn: 1, messageId: 'msg_1' } }]),
      () => appendTask(OTHER, [created(OTHER, 'https://hooks.example.com/y')]),
      // Two calls of one model response wait together: one message lists both.
      () => appendTask(TASK, [asks('call_a', 1), asks('call_b', 1)]),
      () =>
        appendDelivery(WEBHOOK_ATTEMPT_STARTED, { messageId: first, type: 'task.awaiting_approval', attempt: 1, at: AT, leaseUntil: AT }),
      () =>
        appendDelivery(WEBHOOK_ATTEMPTED, {
          messageId: first,
          type: 'task.awaiting_approval',
          attempt: 1,
          at: AT,
          durationMs: 3,
          error: 'the receiver answered 500',
          statusCode: 500,
          delivered: false,
          nextAttemptAt: AT,
        }),
      () => appendTask(TASK, [{ type: 'ToolCallDecided', data: { callId: 'call_a', outcome: 'proceed_once', approved: true } }]),
      () => appendTask(TASK, [asks('call_c', 2)]),
      () => appendTask(TASK, [{ type: 'TurnCompleted', data: { turn: 1 } }]),
      () =>
        appendDelivery(WEBHOOK_ATTEMPT_STARTED, { messageId: first, type: 'task.awaiting_approval', attempt: 2, at: AT, leaseUntil: AT }),
      () =>
        appendDelivery(WEBHOOK_ATTEMPTED, {
          messageId: first,
          type: 'task.awaiting_approval',
          attempt: 2,
          at: AT,
          durationMs: 2,
          statusCode: 200,
          delivered: true,
        }),
      () => appendDelivery(WEBHOOK_REDELIVERY_REQUESTED, { messageId: first, type: 'task.awaiting_approval', at: AT }),
      () => appendTask(TASK, [{ type: 'TaskFailed', data: { turn: 2, error: 'boom' } }]),
      () => appendTask(TASK, [{ type: 'TaskCancelled', data: { turn: 3, droppedMessageIds: [] } }]),
    ];
    /** The outbox derived directly from both streams as read, every event of them (as readWebhookOutbox did before it kept anything). */
    const derived = async () => {
      const taskEvents = (await store.readStream(taskStreamId(TASK))).map((e) => ({
        event: toTaskEvent(e),
        revision: e.revision,
        recordedAt: e.recordedAt,
      }));
      const recorded = await store.readStream(webhookStreamId(TASK));
      return { messages: webhookMessagesOf(TASK, taskEvents), deliveryEvents: recorded.map(toWebhookDeliveryEvent) };
    };
    for (const step of steps) {
      await step();
      expect(kept.outbox).toEqual(await readWebhookOutbox(store, TASK));
      expect(kept.outbox).toMatchObject(await derived());
    }
    unsubscribe();
    expect(kept.outbox.messages.map((m) => m.payload.type)).toEqual([
      'task.awaiting_approval',
      'task.awaiting_approval',
      'task.completed',
      'task.failed',
      'task.cancelled',
    ]);
    expect(kept.outbox.messages[0].payload.data.pendingApprovals?.map((c) => c.callId)).toEqual(['call_a', 'call_b']);
    expect(kept.outbox.deliveryRevision).toBe(5);
    expect(kept.outbox.operatorUrl).toBe('https://hooks.example.com/x');
    expect(outcomes.filter((o) => o === 'changed')).toHaveLength(1 + 2 + 2 + 1 + 1 + 3 + 2);
    expect(outcomes).not.toContain('gap');
  });

  it('takes over from a read: events the read already held are known, later ones apply', async () => {
    await appendTask(TASK, [created(TASK, 'https://hooks.example.com/x'), { type: 'TurnCompleted', data: { turn: 1 } }]);
    const fromRead = await readTaskWebhookOutbox(store, TASK);
    const outcomes: string[] = [];
    const unsubscribe = store.onAppended((events) => events.forEach((e) => outcomes.push(fromRead.apply(e))));
    await appendTask(TASK, [
      { type: 'TurnStarted', data: { turn: 2, messageId: 'msg_2' } },
      { type: 'TurnCompleted', data: { turn: 2 } },
    ]);
    unsubscribe();
    expect(outcomes).toEqual(['unchanged', 'changed']);
    expect(fromRead.apply((await store.readStream(taskStreamId(TASK)))[1])).toBe('known');
    expect(fromRead.outbox).toEqual(await readWebhookOutbox(store, TASK));
    expect(fromRead.outbox.messages.map((m) => m.id)).toEqual([webhookMessageId(TASK, 2), webhookMessageId(TASK, 4)]);
  });
});
