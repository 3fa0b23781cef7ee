import { SseParser } from '../src/sse-parser';
import { fileNameOf } from '../src/multipart';
import { retryDelayMs } from '../src/backoff';

describe('SseParser', () => {
  const text = ': stream open\n\nevent: status\ndata: {"a":1}\nid: 1\n\nevent: content\ndata: line one\ndata: line two\nid: 2\n\n';

  it('returns the same messages however the text is cut into chunks', () => {
    const whole = new SseParser().feed(text);
    expect(whole).toEqual([
      { event: 'status', data: '{"a":1}', id: '1' },
      { event: 'content', data: 'line one\nline two', id: '2' },
    ]);
    for (let size = 1; size < text.length; size++) {
      const parser = new SseParser();
      const messages = [];
      for (let at = 0; at < text.length; at += size) messages.push(...parser.feed(text.slice(at, at + size)));
      expect(messages).toEqual(whole);
    }
  });

  it('reads CRLF and lone CR line ends, a CR split from its LF included', () => {
    const parser = new SseParser();
    expect(parser.feed('event: a\r\ndata: x\r')).toEqual([]);
    expect(parser.feed('\nid: 7\r\r')).toEqual([]);
    expect(parser.feed('\n')).toEqual([{ event: 'a', data: 'x', id: '7' }]);
  });

  it('never returns a block a dropped connection cut off, and ignores comments and unknown fields', () => {
    const parser = new SseParser();
    expect(parser.feed(': keep-alive\n\nretry: 10\nfoo: bar\n\nevent: done\ndata: {"half')).toEqual([]);
  });

  it('names a message without event "message", and keeps the last id for later blocks', () => {
    const parser = new SseParser();
    expect(parser.feed('id: 3\ndata: x\n\ndata: y\n\n')).toEqual([
      { event: 'message', data: 'x', id: '3' },
      { event: 'message', data: 'y', id: '3' },
    ]);
  });
});

describe('fileNameOf', () => {
  it("prefers RFC 6266's filename* (the exact UTF-8 name) over the ASCII fallback", () => {
    expect(fileNameOf(`attachment; filename="r_sum_.md"; filename*=UTF-8''r%C3%A9sum%C3%A9%201.md`)).toBe('résumé 1.md');
    expect(fileNameOf('attachment; filename="a \\"b\\".txt"')).toBe('a "b".txt');
    expect(fileNameOf('attachment')).toBe('');
  });
});

describe('retryDelayMs', () => {
  it('doubles from the base up to the cap, with half of it random', () => {
    const policy = { retries: 10, baseDelayMs: 100, maxDelayMs: 1000 };
    for (let i = 0; i < 50; i++) {
      const first = retryDelayMs(policy, 1);
      expect(first).toBeGreaterThanOrEqual(50);
      expect(first).toBeLessThanOrEqual(100);
      const capped = retryDelayMs(policy, 8);
      expect(capped).toBeGreaterThanOrEqual(500);
      expect(capped).toBeLessThanOrEqual(1000);
    }
  });
});
