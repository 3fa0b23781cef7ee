import { taskStreamId } from '@app/common';
import type { StoredEvent } from '@app/event-store';
import type { TaskEvent } from '@app/task-domain';
import { TASK_EVENT_SCHEMA_VERSIONS } from '@app/task-domain';
import { TaskWebhookOutbox } from './task-webhook-outbox';
import { WEBHOOK_ATTEMPT_STARTED, WEBHOOK_EVENT_SCHEMA_VERSION, webhookStreamId } from '../deliveries/delivery.events';
import { webhookMessageId } from './webhook-messages';

const TASK = 'task_0123456789abcdef0123456789abcdef';
const RECORDED = '2026-11-26T00:00:00.000Z';
let position = 0;

const taskEvent = (revision: number, event: TaskEvent): StoredEvent => ({
  streamId: taskStreamId(TASK),
  revision,
  globalPosition: ++position,
  type: event.type,
  schemaVersion: TASK_EVENT_SCHEMA_VERSIONS[event.type],
  data: event.data,
  recordedAt: RECORDED,
});
const created = (webhookUrl?: string): TaskEvent => ({
  type: 'TaskCreated',
  data: {
    taskId: TASK,
    tenantId: 't',
    messageId: 'msg_1',
    text: 'hi',
    autoExecute: true,
    showInHistory: true,
    env: {},
    secretNames: ['TOKEN'],
    files: [],
    ...(webhookUrl ? { webhookUrl } : {}),
  },
});
const claim = (revision: number): StoredEvent => ({
  streamId: webhookStreamId(TASK),
  revision,
  globalPosition: ++position,
  type: WEBHOOK_ATTEMPT_STARTED,
  schemaVersion: WEBHOOK_EVENT_SCHEMA_VERSION,
  data: { messageId: webhookMessageId(TASK, 3), type: 'task.completed', attempt: revision, at: RECORDED, leaseUntil: RECORDED },
  recordedAt: RECORDED,
});

describe('TaskWebhookOutbox', () => {
  it('says what each event did: changed, unchanged, already known, or a gap', () => {
    const outbox = new TaskWebhookOutbox(TASK);
    expect(outbox.apply(taskEvent(1, created('https://hooks.example.com/x')))).toBe('changed');
    expect(outbox.apply(taskEvent(2, { type: 'TurnStarted', data: { turn: 1, messageId: 'msg_1' } }))).toBe('unchanged');
    expect(outbox.apply(taskEvent(3, { type: 'TurnCompleted', data: { turn: 1 } }))).toBe('changed');
    expect(outbox.apply(taskEvent(3, { type: 'TurnCompleted', data: { turn: 1 } }))).toBe('known');
    expect(outbox.apply(claim(1))).toBe('changed');
    expect(outbox.apply(claim(1))).toBe('known');
    expect(outbox.apply(claim(3))).toBe('gap');
    expect(outbox.apply(taskEvent(5, { type: 'TurnCompleted', data: { turn: 2 } }))).toBe('gap');
    // A gap applies nothing: the outbox is as it was before it.
    expect(outbox.outbox.messages.map((m) => m.id)).toEqual([webhookMessageId(TASK, 3)]);
    expect(outbox.outbox.deliveryRevision).toBe(1);
    expect(outbox.outbox.secrets).toEqual({ secretNames: ['TOKEN'] });
  });

  it('covers another built as far or less far on both streams', () => {
    const behind = new TaskWebhookOutbox(TASK);
    const ahead = new TaskWebhookOutbox(TASK);
    const first = taskEvent(1, created('https://hooks.example.com/x'));
    const second = taskEvent(2, { type: 'TurnCompleted', data: { turn: 1 } });
    [first, second].forEach((e) => ahead.apply(e));
    behind.apply(first);
    expect(ahead.covers(behind)).toBe(true);
    expect(behind.covers(ahead)).toBe(false);
    behind.apply(second);
    behind.apply(claim(1));
    expect(ahead.covers(behind)).toBe(false);
    expect(behind.covers(ahead)).toBe(true);
  });

  it('keeps nothing of a task without a webhook URL: its turn ends make no message', () => {
    const outbox = new TaskWebhookOutbox(TASK);
    outbox.apply(taskEvent(1, created()));
    expect(outbox.withoutWebhook).toBe(true);
    expect(outbox.apply(taskEvent(2, { type: 'TurnCompleted', data: { turn: 1 } }))).toBe('unchanged');
    expect(outbox.outbox.messages).toEqual([]);
    expect(outbox.outbox.secrets).toBeUndefined();
  });

  it('refuses an event of another task, and an unknown task event, loudly', () => {
    const outbox = new TaskWebhookOutbox(TASK);
    expect(() => outbox.apply({ ...taskEvent(1, created()), streamId: taskStreamId('task_other') })).toThrow(/not a stream of/);
    expect(() => outbox.apply({ ...taskEvent(1, created()), type: 'SomethingNew' })).toThrow(/not a task event type/);
  });
});
