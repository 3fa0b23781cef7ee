import type { IncomingMessage } from 'node:http';
import { requestIdOf } from './request-log-context';

const withHeader = (value?: string | string[]) => ({ headers: value === undefined ? {} : { 'x-request-id': value } }) as IncomingMessage;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('requestIdOf', () => {
  it("keeps the caller's plain X-Request-ID", () => {
    expect(requestIdOf(withHeader('abc-123'))).toBe('abc-123');
    expect(requestIdOf(withHeader('lb.7f3a:b_c-9'))).toBe('lb.7f3a:b_c-9');
  });
  it('makes a UUID when there is none', () => expect(requestIdOf(withHeader())).toMatch(UUID));
  it('replaces an id that is too long, empty, repeated, or has other characters (it lands in every log line)', () => {
    for (const given of ['x'.repeat(129), '', ['a', 'b'], 'has space', 'quote"d', 'new\nline']) {
      expect(requestIdOf(withHeader(given))).toMatch(UUID);
    }
  });
});
