import { deliveryStateOf, deliveryView, projectDeliveries } from './webhook-deliveries.projection';
import type { WebhookAttemptedData, WebhookDeliveryEvent } from '../deliveries/delivery.events';

const started = (attempt: number, leaseUntil = '2026-11-25T00:05:00.000Z'): WebhookDeliveryEvent => ({
  type: 'WebhookAttemptStarted',
  data: { messageId: 'wh_1', type: 'task.completed', attempt, at: `2026-11-25T00:00:0${attempt}.000Z`, leaseUntil },
});
const attempted = (attempt: number, change: Partial<WebhookAttemptedData> = {}): WebhookDeliveryEvent => ({
  type: 'WebhookAttempted',
  data: {
    messageId: 'wh_1',
    type: 'task.completed',
    attempt,
    at: `2026-11-25T00:00:0${attempt}.000Z`,
    statusCode: 500,
    error: 'the receiver answered 500',
    durationMs: 3,
    delivered: false,
    ...change,
  },
});
const failed = (attempt: number, nextAttemptAt?: string) => attempted(attempt, nextAttemptAt ? { nextAttemptAt } : {});
const ok = (attempt: number) => attempted(attempt, { statusCode: 204, delivered: true, error: undefined });
const message = { id: 'wh_1', type: 'task.completed' };
/** What the dispatcher schedules from: the delivery as shown, when it is due, and its next attempt's number. */
const scheduleOf = (m: typeof message, events: WebhookDeliveryEvent[]) => {
  const state = deliveryStateOf(m, events);
  return { delivery: deliveryView(state), dueAt: state.status === 'pending' ? state.dueAt : 0, nextAttempt: state.lastAttempt + 1 };
};

describe('projectDeliveries', () => {
  it('shows a message without attempts as pending, due at once, its first attempt next', () => {
    expect(projectDeliveries([message], [])).toEqual([{ id: 'wh_1', type: 'task.completed', status: 'pending', attempts: [] }]);
    expect(scheduleOf(message, [])).toMatchObject({ dueAt: 0, nextAttempt: 1 });
  });

  it('is pending with the next attempt time after a failed attempt that will be retried', () => {
    const events = [started(1), failed(1, '2026-11-25T00:01:00.000Z')];
    expect(projectDeliveries([message], events)[0]).toEqual({
      id: 'wh_1',
      type: 'task.completed',
      status: 'pending',
      attempts: [{ at: '2026-11-25T00:00:01.000Z', statusCode: 500, error: 'the receiver answered 500', durationMs: 3 }],
      nextAttemptAt: '2026-11-25T00:01:00.000Z',
    });
    expect(scheduleOf(message, events)).toMatchObject({ dueAt: Date.parse('2026-11-25T00:01:00.000Z'), nextAttempt: 2 });
  });

  it('treats a claim without an outcome as in flight: pending, not an attempt yet, due again when its lease runs out', () => {
    const events = [started(1), failed(1, 'x'), started(2, '2026-11-25T00:09:00.000Z')];
    const schedule = scheduleOf(message, events);
    expect(schedule.delivery.status).toBe('pending');
    expect(schedule.delivery.attempts).toHaveLength(1);
    expect(schedule.delivery).not.toHaveProperty('nextAttemptAt');
    expect(schedule).toMatchObject({ dueAt: Date.parse('2026-11-25T00:09:00.000Z'), nextAttempt: 3 });
  });

  it('is delivered when the last attempt was, listing every attempt in order', () => {
    const [d] = projectDeliveries([message], [started(1), failed(1, 'x'), started(2), failed(2, 'y'), started(3), ok(3)]);
    expect(d.status).toBe('delivered');
    expect(d.attempts.map((a) => a.statusCode)).toEqual([500, 500, 204]);
    expect(d.attempts[2]).not.toHaveProperty('error');
    expect(d).not.toHaveProperty('nextAttemptAt');
  });

  it('is failed when the last attempt failed with no next attempt (WEBHOOK_MAX_ATTEMPTS reached)', () => {
    expect(projectDeliveries([message], [failed(1, 'x'), failed(2)])[0].status).toBe('failed');
  });

  it('starts a new round on a redelivery request: pending and due at once, attempts counted anew, every attempt listed', () => {
    const redelivery: WebhookDeliveryEvent = {
      type: 'WebhookRedeliveryRequested',
      data: { messageId: 'wh_1', type: 'task.completed', at: '2026-11-25T00:00:05.000Z' },
    };
    const exhausted = [started(1), failed(1, 'x'), started(2), failed(2)];
    expect(scheduleOf(message, exhausted).delivery.status).toBe('failed');
    const requested = scheduleOf(message, [...exhausted, redelivery]);
    expect(requested).toMatchObject({ dueAt: 0, nextAttempt: 1, delivery: { status: 'pending' } });
    expect(requested.delivery.attempts).toHaveLength(2);
    expect(requested.delivery).not.toHaveProperty('nextAttemptAt');

    expect(scheduleOf(message, [...exhausted, redelivery, started(1)])).toMatchObject({ nextAttempt: 2, delivery: { status: 'pending' } });
    const retried = scheduleOf(message, [...exhausted, redelivery, started(1), failed(1, '2026-11-25T00:02:00.000Z')]);
    expect(retried).toMatchObject({ nextAttempt: 2, dueAt: Date.parse('2026-11-25T00:02:00.000Z'), delivery: { status: 'pending' } });
    const delivered = scheduleOf(message, [...exhausted, redelivery, started(1), failed(1, 'x'), started(2), ok(2)]).delivery;
    expect(delivered.status).toBe('delivered');
    expect(delivered.attempts.map((a) => a.statusCode)).toEqual([500, 500, 500, 204]);
  });

  it("keeps each message's events apart", () => {
    const other = { id: 'wh_2', type: 'task.failed' };
    const theirs = ok(1);
    const deliveries = projectDeliveries(
      [message, other],
      [{ ...theirs, data: { ...theirs.data, messageId: 'wh_2' } } as WebhookDeliveryEvent],
    );
    expect(deliveries.map((d) => [d.id, d.status])).toEqual([
      ['wh_1', 'pending'],
      ['wh_2', 'delivered'],
    ]);
  });
});
