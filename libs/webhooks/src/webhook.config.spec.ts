import { inspect } from 'node:util';
import { WebhookConfig } from './webhook.config';

const key = Buffer.alloc(32, 7);
const secret = `whsec_${key.toString('base64')}`;

describe('WebhookConfig', () => {
  it('uses the documented defaults when nothing is set', () => {
    const config = new WebhookConfig({});
    expect(config).toMatchObject({ timeoutMs: 10_000, retryBaseMs: 1_000, maxAttempts: 8, allowHosts: new Set(), maxConnections: 4 });
    expect(config.defaultUrl).toBeUndefined();
    expect(config.signingKey).toBeUndefined();
  });

  it('reads every setting from its variable', () => {
    const config = new WebhookConfig({
      WEBHOOK_URL: 'https://hooks.example/agent',
      WEBHOOK_SECRET: secret,
      WEBHOOK_TIMEOUT_MS: '2500',
      WEBHOOK_RETRY_BASE_MS: '50',
      WEBHOOK_MAX_ATTEMPTS: '3',
      WEBHOOK_ALLOW_HOSTS: '127.0.0.1:9000, Hooks.Internal:443',
      WEBHOOK_MAX_CONNECTIONS: '16',
    });
    expect(config.defaultUrl?.href).toBe('https://hooks.example/agent');
    expect(config.signingKey).toEqual(key);
    expect(config).toMatchObject({ timeoutMs: 2_500, retryBaseMs: 50, maxAttempts: 3, maxConnections: 16 });
    expect(config.allowHosts).toEqual(new Set(['127.0.0.1:9000', 'hooks.internal:443']));
  });

  it('keeps the signing key out of logs and JSON', () => {
    const config = new WebhookConfig({ WEBHOOK_SECRET: secret });
    for (const shown of [JSON.stringify(config), inspect(config, { depth: 5, showHidden: true })]) {
      expect(shown).not.toContain(key.toString('base64'));
      expect(shown).not.toContain(key.toString('hex'));
      expect(shown).not.toMatch(/7, 7, 7|07 07 07/);
    }
  });

  it.each([
    ['WEBHOOK_TIMEOUT_MS', '0'],
    ['WEBHOOK_RETRY_BASE_MS', 'soon'],
    ['WEBHOOK_MAX_ATTEMPTS', '0'],
    ['WEBHOOK_MAX_CONNECTIONS', '0'],
    ['WEBHOOK_ALLOW_HOSTS', 'localhost'],
    ['WEBHOOK_SECRET', 'whsec_short'],
  ])('refuses %s=%s naming the variable', (name, value) => {
    expect(() => new WebhookConfig({ [name]: value })).toThrow(name);
  });

  it('refuses WEBHOOK_URL without WEBHOOK_SECRET: webhooks are always signed', () => {
    expect(() => new WebhookConfig({ WEBHOOK_URL: 'https://hooks.example/' })).toThrow(/WEBHOOK_URL is set but WEBHOOK_SECRET is not/);
  });

  it.each([
    ['ftp://hooks.example/', 'must be an http or https URL'],
    ['https://user:pw-MARKER@hooks.example/', 'must not contain credentials'],
    ['hooks.example/MARKER', 'is not a valid URL'],
  ])('refuses WEBHOOK_URL=%s without echoing it', (url, why) => {
    expect(() => new WebhookConfig({ WEBHOOK_URL: url, WEBHOOK_SECRET: secret })).toThrow(why);
    expect(() => new WebhookConfig({ WEBHOOK_URL: url, WEBHOOK_SECRET: secret })).not.toThrow('MARKER');
  });
});
