const PREFIX = 'whsec_';
const MIN_BYTES = 24;
const MAX_BYTES = 64;
// Standard base64, padded: what `openssl rand -base64 32` prints and Standard Webhooks libraries decode.
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * The HMAC key in a Standard Webhooks secret: `whsec_` followed by the base64 of 24 to 64 random
 * bytes. Anything else throws an error naming `variable` and saying what is wrong, never
 * showing the value.
 */
export function parseWebhookSecret(raw: string, variable = 'WEBHOOK_SECRET'): Buffer {
  const expected = `${variable} must be "${PREFIX}" followed by the base64 of ${MIN_BYTES} to ${MAX_BYTES} random bytes (e.g. "${PREFIX}$(openssl rand -base64 32)")`;
  const text = raw.trim();
  if (!text.startsWith(PREFIX)) throw new Error(`${expected}; it does not start with "${PREFIX}"`);
  const encoded = text.slice(PREFIX.length);
  if (encoded === '' || !BASE64.test(encoded)) throw new Error(`${expected}; what follows "${PREFIX}" is not padded standard base64`);
  const key = Buffer.from(encoded, 'base64');
  if (key.length < MIN_BYTES || key.length > MAX_BYTES) throw new Error(`${expected}; it decodes to ${key.length} bytes`);
  return key;
}
