import { createHmac } from 'node:crypto';

/** The Standard Webhooks headers of one attempt (https://www.standardwebhooks.com). */
export interface WebhookHeaders {
  readonly 'webhook-id': string;
  readonly 'webhook-timestamp': string;
  readonly 'webhook-signature': string;
}

/**
 * Signs `body` as Standard Webhooks does: `v1,` and the base64 HMAC-SHA256, keyed by the secret's
 * decoded bytes, of `<id>.<timestamp>.<body>`, the timestamp in Unix seconds. `body` must be sent
 * byte for byte as signed. Each attempt is signed anew with its own time: receivers refuse
 * timestamps more than a few minutes old, and a retry may come much later.
 */
export function signWebhook(key: Uint8Array, id: string, sentAt: Date, body: string): WebhookHeaders {
  const timestamp = String(Math.floor(sentAt.getTime() / 1000));
  const mac = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${mac}` };
}
