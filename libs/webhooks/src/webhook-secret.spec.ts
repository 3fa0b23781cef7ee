import { randomBytes } from 'node:crypto';
import { parseWebhookSecret } from './webhook-secret';

const secretOf = (bytes: Buffer) => `whsec_${bytes.toString('base64')}`;

describe('parseWebhookSecret', () => {
  it.each([24, 32, 64])('decodes whsec_ + the base64 of %i bytes into those bytes', (size) => {
    const bytes = randomBytes(size);
    expect(parseWebhookSecret(secretOf(bytes))).toEqual(bytes);
  });

  it('ignores whitespace around the value, as a .env file may leave it', () => {
    const bytes = randomBytes(32);
    expect(parseWebhookSecret(`  ${secretOf(bytes)}\n`)).toEqual(bytes);
  });

  // Every value here holds a marker (MARK) that must never appear in the error.
  it.each([
    ['no prefix', Buffer.from('MARK-0123456789abcdef-xyz').toString('base64'), 'does not start with "whsec_"'],
    ['another prefix', `whsk_${Buffer.from('MARK-0123456789abcdef-xyz').toString('base64')}`, 'does not start with "whsec_"'],
    ['not base64', 'whsec_MARK!!-0123456789abcdef-0123456789', 'is not padded standard base64'],
    ['URL-safe base64', `whsec_MARK${'_-'.repeat(14)}`, 'is not padded standard base64'],
    ['missing padding', 'whsec_MARK0123456789abcdef0123456789a', 'is not padded standard base64'],
    ['too few bytes', `whsec_MARK${Buffer.alloc(12).toString('base64')}`, 'decodes to 15 bytes'],
    ['too many bytes', `whsec_MARK${Buffer.alloc(66).toString('base64')}`, 'decodes to 69 bytes'],
  ])('refuses %s, naming the variable and never the value', (_, value, why) => {
    const error = (() => {
      try {
        parseWebhookSecret(value, 'WEBHOOK_SECRET');
      } catch (e) {
        return e as Error;
      }
      throw new Error('accepted');
    })();
    expect(error.message).toMatch(/^WEBHOOK_SECRET must be "whsec_" followed by the base64 of 24 to 64 random bytes/);
    expect(error.message).toContain(why);
    expect(error.message).not.toContain('MARK');
    expect(error.message).not.toContain(value.slice(6, 20));
  });

  it('refuses a prefix with nothing after it', () => {
    expect(() => parseWebhookSecret('whsec_')).toThrow('WEBHOOK_SECRET must be "whsec_" followed by');
  });
});
