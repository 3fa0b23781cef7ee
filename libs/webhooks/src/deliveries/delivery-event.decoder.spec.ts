import { toWebhookDeliveryEvent } from './delivery-event.decoder';
import { UnreadableWebhookEventError } from './delivery.errors';
import { taskIdOfWebhookStream, webhookStreamId } from './delivery.events';

const stored = (type: string, schemaVersion: number, data: unknown) => ({
  streamId: 'webhooks-task_1',
  revision: 3,
  type,
  schemaVersion,
  data,
});

describe('toWebhookDeliveryEvent', () => {
  it('reads a claim and an outcome', () => {
    const claim = { messageId: 'wh_1', type: 'task.completed', attempt: 1, at: 'a', leaseUntil: 'b' };
    expect(toWebhookDeliveryEvent(stored('WebhookAttemptStarted', 1, claim))).toEqual({ type: 'WebhookAttemptStarted', data: claim });
    const outcome = { messageId: 'wh_1', type: 'task.completed', attempt: 1, at: 'a', durationMs: 1, delivered: true };
    expect(toWebhookDeliveryEvent(stored('WebhookAttempted', 1, outcome)).data).toEqual(outcome);
  });
  it('reads a redelivery request, which has no attempt number', () => {
    const request = { messageId: 'wh_1', type: 'task.completed', at: 'a' };
    expect(toWebhookDeliveryEvent(stored('WebhookRedeliveryRequested', 1, request))).toEqual({
      type: 'WebhookRedeliveryRequested',
      data: request,
    });
  });

  it.each([
    ['an unknown type', stored('WebhookForgotten', 1, { messageId: 'wh_1', attempt: 1 }), /not a webhook delivery event/],
    ['a newer version', stored('WebhookAttempted', 2, { messageId: 'wh_1', attempt: 1 }), /schema version 2/],
    ['data without a message id', stored('WebhookAttempted', 1, { attempt: 1 }), /not a webhook delivery event's/],
    ['an attempt without its number', stored('WebhookAttemptStarted', 1, { messageId: 'wh_1' }), /not a webhook attempt/],
  ])('refuses %s, naming where it is', (_what, event, message) => {
    expect(() => toWebhookDeliveryEvent(event)).toThrow(UnreadableWebhookEventError);
    expect(() => toWebhookDeliveryEvent(event)).toThrow(message);
    expect(() => toWebhookDeliveryEvent(event)).toThrow(/webhooks-task_1@3/);
  });
});

describe('webhookStreamId', () => {
  it('is not a task stream, and names its task', () => {
    expect(webhookStreamId('task_1')).toBe('webhooks-task_1');
    expect(taskIdOfWebhookStream('webhooks-task_1')).toBe('task_1');
    expect(taskIdOfWebhookStream('task-task_1')).toBeUndefined();
  });
});
