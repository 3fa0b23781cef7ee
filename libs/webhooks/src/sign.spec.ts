import { randomBytes } from 'node:crypto';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { signWebhook } from './sign';

// Our signatures checked by the Standard Webhooks reference implementation, not by our own code.
describe('signWebhook, verified with the standardwebhooks package', () => {
  const key = randomBytes(32);
  const secret = `whsec_${key.toString('base64')}`;
  const body = JSON.stringify({ type: 'task.completed', timestamp: '2026-11-25T10:00:00.000Z', data: { taskId: 'task_1', turn: 1 } });
  const id = 'msg_2pZ5ZkqU7E4z1F8c';

  it('signs what a receiver verifies, with the headers Standard Webhooks names', () => {
    const headers = signWebhook(key, id, new Date(), body);
    expect(Object.keys(headers).sort()).toEqual(['webhook-id', 'webhook-signature', 'webhook-timestamp']);
    expect(headers['webhook-id']).toBe(id);
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(new Webhook(secret).verify(body, { ...headers })).toEqual(JSON.parse(body));
  });

  it('writes the timestamp in whole Unix seconds', () => {
    expect(signWebhook(key, id, new Date('2026-11-25T10:00:00.999Z'), body)['webhook-timestamp']).toBe('1795600800');
  });

  it('makes the same signature as the reference implementation for the same input', () => {
    const sentAt = new Date('2026-11-25T10:00:00Z');
    expect(signWebhook(key, id, sentAt, body)['webhook-signature']).toBe(new Webhook(secret).sign(id, sentAt, body));
  });

  it('signs a body with non-ASCII characters as its UTF-8 bytes', () => {
    const text = JSON.stringify({ data: { note: 'approve “rm -rf build” — ✓' } });
    const headers = signWebhook(key, id, new Date(), text);
    expect(new Webhook(secret).verify(Buffer.from(text, 'utf8'), { ...headers })).toEqual(JSON.parse(text));
  });

  it('fails verification when the body was tampered with', () => {
    const headers = signWebhook(key, id, new Date(), body);
    expect(() => new Webhook(secret).verify(body.replace('task_1', 'task_2'), { ...headers })).toThrow(WebhookVerificationError);
  });

  it('fails verification when the id was changed', () => {
    const headers = signWebhook(key, id, new Date(), body);
    expect(() => new Webhook(secret).verify(body, { ...headers, 'webhook-id': 'msg_other' })).toThrow(WebhookVerificationError);
  });

  it('fails verification with another secret', () => {
    const headers = signWebhook(key, id, new Date(), body);
    const other = `whsec_${randomBytes(32).toString('base64')}`;
    expect(() => new Webhook(other).verify(body, { ...headers })).toThrow(WebhookVerificationError);
  });

  it('fails verification with a timestamp older than the receiver tolerates', () => {
    const headers = signWebhook(key, id, new Date(Date.now() - 10 * 60 * 1000), body);
    expect(() => new Webhook(secret).verify(body, { ...headers })).toThrow(/timestamp too old/i);
  });
});
