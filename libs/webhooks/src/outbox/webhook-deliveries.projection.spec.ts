import { projectDeliveries } from './webhook-deliveries.projection';
import { WebhookAttemptedData } from './webhook-delivery.events';

const failed = (attempt: number, nextAttemptAt?: string): WebhookAttemptedData => ({
  messageId: 'wh_1',
  type: 'task.completed',
  attempt,
  at: `2026-11-25T00:00:0${attempt}.000Z`,
  statusCode: 500,
  error: 'the receiver answered 500',
  durationMs: 3,
  delivered: false,
  ...(nextAttemptAt ? { nextAttemptAt } : {}),
});
const message = { id: 'wh_1', type: 'task.completed' };

describe('projectDeliveries', () => {
  it('shows a message without attempts as pending', () => {
    expect(projectDeliveries([message], [])).toEqual([{ id: 'wh_1', type: 'task.completed', status: 'pending', attempts: [] }]);
  });

  it('is pending with the next attempt time after a failed attempt that will be retried', () => {
    const [d] = projectDeliveries([message], [failed(1, '2026-11-25T00:01:00.000Z')]);
    expect(d).toEqual({
      id: 'wh_1',
      type: 'task.completed',
      status: 'pending',
      attempts: [{ at: '2026-11-25T00:00:01.000Z', statusCode: 500, error: 'the receiver answered 500', durationMs: 3 }],
      nextAttemptAt: '2026-11-25T00:01:00.000Z',
    });
  });

  it('is delivered when the last attempt was, listing every attempt in order', () => {
    const ok: WebhookAttemptedData = { ...failed(3), statusCode: 204, delivered: true, error: undefined };
    const [d] = projectDeliveries([message], [failed(1, 'x'), failed(2, 'y'), ok]);
    expect(d.status).toBe('delivered');
    expect(d.attempts.map((a) => a.statusCode)).toEqual([500, 500, 204]);
    expect(d.attempts[2]).not.toHaveProperty('error');
    expect(d).not.toHaveProperty('nextAttemptAt');
  });

  it('is failed when the last attempt failed with no next attempt (WEBHOOK_MAX_ATTEMPTS reached)', () => {
    expect(projectDeliveries([message], [failed(1, 'x'), failed(2)])[0].status).toBe('failed');
  });

  it("keeps each message's attempts apart", () => {
    const other = { id: 'wh_2', type: 'task.failed' };
    const deliveries = projectDeliveries([message, other], [{ ...failed(1), messageId: 'wh_2', delivered: true, error: undefined }]);
    expect(deliveries.map((d) => [d.id, d.status])).toEqual([
      ['wh_1', 'pending'],
      ['wh_2', 'delivered'],
    ]);
  });
});
