import { AddressRefusedError, ValidationError, checkDestination } from '@app/common';

const FIELD = 'webhookUrl';
export const MAX_WEBHOOK_URL_LENGTH = 2048;

/**
 * Checks a task's `webhookUrl` before anything is written: an http(s) URL without credentials
 * whose host, when it is an IP literal, is public or allow-listed (WEBHOOK_ALLOW_HOSTS). Names are
 * judged again on every attempt, on the addresses they resolve to. Throws a ValidationError
 * naming the field; `signingKey` absent (no WEBHOOK_SECRET) refuses any URL.
 */
export function checkWebhookUrl(raw: string, settings: { readonly allowHosts: ReadonlySet<string>; readonly signingKey?: Buffer }): string {
  if (raw.length > MAX_WEBHOOK_URL_LENGTH) throw new ValidationError(`${FIELD} must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ValidationError(`${FIELD} must be an absolute http or https URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ValidationError(`${FIELD} must be an http or https URL`);
  if (url.username !== '' || url.password !== '') {
    throw new ValidationError(`${FIELD} must not contain credentials (user:password@): webhooks are authenticated by their signature`);
  }
  try {
    checkDestination(url, settings.allowHosts, 'WEBHOOK_ALLOW_HOSTS');
  } catch (error) {
    if (!(error instanceof AddressRefusedError)) throw error;
    throw new ValidationError(`${FIELD}: ${error.message}`);
  }
  if (!settings.signingKey) {
    throw new ValidationError(`${FIELD} needs WEBHOOK_SECRET to be set on the service: every webhook is signed with it`);
  }
  return url.href;
}
