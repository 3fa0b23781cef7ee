import type { WebhookDelivery } from './webhook-deliveries.projection';

const MASK = '[WEBHOOK_URL]';

/**
 * A delivery as a tenant may see it when its messages go to the operator's WEBHOOK_URL: an
 * attempt's error names where it failed to connect ("getaddrinfo ENOTFOUND <host>"), and that URL
 * is the operator's (it may carry a token, and is never shown). Its path and query never appear in
 * an error; the whole URL, its origin and its host are masked all the same, longest first.
 */
export function maskOperatorUrl(delivery: WebhookDelivery, operatorUrl: string): WebhookDelivery {
  const url = new URL(operatorUrl);
  const parts = [url.href, url.origin, url.host, url.hostname].filter((p) => p !== '').sort((a, b) => b.length - a.length);
  const mask = (text: string) => parts.reduce((masked, part) => masked.split(part).join(MASK), text);
  return {
    ...delivery,
    attempts: delivery.attempts.map((a) => (a.error === undefined ? a : { ...a, error: mask(a.error) })),
  };
}
