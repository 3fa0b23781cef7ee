import { ValidationError } from '@app/common';
import { checkWebhookUrl } from './webhook-url';

const key = Buffer.alloc(32, 1);
const settings = { allowHosts: new Set(['127.0.0.1:9999']), signingKey: key };

describe('checkWebhookUrl', () => {
  it('accepts a public https URL and an allow-listed loopback one', () => {
    expect(checkWebhookUrl('https://hooks.example.com/a', settings)).toBe('https://hooks.example.com/a');
    expect(checkWebhookUrl('http://127.0.0.1:9999/in', settings)).toBe('http://127.0.0.1:9999/in');
  });

  it.each([
    ['ftp://example.com/x', /webhookUrl must be an http or https URL/],
    ['not a url', /webhookUrl must be an absolute http or https URL/],
    ['https://user:pw@example.com/', /webhookUrl must not contain credentials/],
    ['http://127.0.0.1:8080/', /webhookUrl: refused: 127\.0\.0\.1 is a loopback address.*WEBHOOK_ALLOW_HOSTS/],
    ['http://10.1.2.3/', /webhookUrl: refused: 10\.1\.2\.3 is a private address/],
    ['http://[::1]:9999/', /webhookUrl: refused/],
  ])('refuses %s naming the field', (url, message) => {
    expect(() => checkWebhookUrl(url, settings)).toThrow(ValidationError);
    expect(() => checkWebhookUrl(url, settings)).toThrow(message);
  });

  it('refuses any URL while WEBHOOK_SECRET is unset, saying so', () => {
    expect(() => checkWebhookUrl('https://hooks.example.com/a', { allowHosts: new Set() })).toThrow(
      /webhookUrl needs WEBHOOK_SECRET to be set/,
    );
  });
});
