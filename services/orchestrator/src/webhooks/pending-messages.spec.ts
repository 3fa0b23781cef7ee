import type { WebhookDeliveryEvent, WebhookMessageSpec, WebhookOutbox } from '@app/webhooks';
import { PendingMessages } from './pending-messages';

const TASK = 'task_1';
const message = (id: string): WebhookMessageSpec => ({
  id,
  url: 'https://hooks.example.com/x',
  triggerRevision: 3,
  payload: { type: 'task.completed', timestamp: '2026-11-25T00:00:00.000Z', data: { taskId: TASK, status: 'completed', turn: 1 } },
});
const failed = (id: string, nextAttemptAt?: string): WebhookDeliveryEvent => ({
  type: 'WebhookAttempted',
  data: {
    messageId: id,
    type: 'task.completed',
    attempt: 1,
    at: '2026-11-25T00:00:00.000Z',
    error: 'the receiver answered 500',
    durationMs: 1,
    delivered: false,
    ...(nextAttemptAt ? { nextAttemptAt } : {}),
  },
});
const outbox = (ids: string[], deliveryEvents: WebhookDeliveryEvent[] = []): WebhookOutbox => ({
  messages: ids.map(message),
  deliveryEvents,
  deliveryRevision: deliveryEvents.length,
});
const idle = () => false;

describe('PendingMessages', () => {
  it('takes the messages due now, earliest first, and none of those due later', () => {
    const pending = new PendingMessages();
    const later = '2026-11-25T00:01:00.000Z';
    pending.reconcile(TASK, outbox(['wh_a', 'wh_b'], [failed('wh_b', later)]), 5);
    expect(pending.takeDue(Date.parse(later) - 1, idle)).toEqual({ id: 'wh_a', taskId: TASK });
    expect(pending.takeDue(Date.parse(later) - 1, idle)).toBeUndefined();
    expect(pending.nextDueAt()).toBe(Date.parse(later));
    expect(pending.takeDue(Date.parse(later), idle)).toEqual({ id: 'wh_b', taskId: TASK });
  });

  it('drops a delivered or failed message, and the entry of one being attempted until it is requeued', () => {
    const pending = new PendingMessages();
    pending.reconcile(TASK, outbox(['wh_a', 'wh_b']), 5);
    pending.reconcile(TASK, outbox(['wh_a', 'wh_b'], [failed('wh_a')]), 6);
    expect(pending.get('wh_a')).toBeUndefined();
    expect(pending.takeDue(0, (id) => id === 'wh_b')).toBeUndefined();
    pending.requeue('wh_b');
    expect(pending.takeDue(0, idle)).toEqual({ id: 'wh_b', taskId: TASK });
  });

  it('re-times a message to retry, leaving its old queue entry stale', () => {
    const pending = new PendingMessages();
    pending.reconcile(TASK, outbox(['wh_a']), 5);
    pending.retryAt('wh_a', 1_000);
    expect(pending.takeDue(999, idle)).toBeUndefined();
    expect(pending.takeDue(1_000, idle)).toEqual({ id: 'wh_a', taskId: TASK });
  });

  it('keeps the checkpoint before the earliest event that made a pending message due', () => {
    const pending = new PendingMessages();
    expect(pending.checkpoint(40)).toBe(40);
    pending.reconcile(TASK, outbox(['wh_a']), 12);
    pending.reconcile(TASK, outbox(['wh_a']), 30);
    expect(pending.checkpoint(40)).toBe(11);
    pending.reconcile(TASK, outbox(['wh_a'], [failed('wh_a')]), 31);
    expect(pending.checkpoint(40)).toBe(40);
  });
});
