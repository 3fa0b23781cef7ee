import { contentKind, decodeText, sniffKind } from './content-type';

describe('contentKind', () => {
  it.each([
    ['text/html; charset=utf-8', 'html'],
    ['application/xhtml+xml', 'html'],
    ['text/plain', 'text'],
    ['text/markdown', 'text'],
    ['TEXT/CSV', 'text'],
    ['application/json', 'text'],
    ['application/problem+json', 'text'],
    ['application/atom+xml', 'text'],
    ['image/png', 'binary'],
    ['application/pdf', 'binary'],
    ['application/octet-stream', 'binary'],
    ['', 'unknown'],
  ])('%s is %s', (type, kind) => {
    expect(contentKind(type)).toBe(kind);
  });
});

describe('sniffKind', () => {
  it('calls NUL bytes binary, a leading html tag HTML, and anything else text', () => {
    expect(sniffKind(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00]))).toBe('binary');
    expect(sniffKind(Buffer.from('  <!DOCTYPE html><p>x'))).toBe('html');
    expect(sniffKind(Buffer.from('plain words'))).toBe('text');
  });
});

describe('decodeText', () => {
  it('uses the charset of the header, else of an early meta tag, else UTF-8', () => {
    const latin1 = Buffer.from('café', 'latin1');
    expect(decodeText(latin1, 'text/plain; charset=ISO-8859-1', 'text', false)).toBe('café');
    expect(decodeText(Buffer.from('<meta charset="windows-1252"><p>caf\xe9', 'latin1'), 'text/html', 'html', false)).toContain('café');
    expect(decodeText(Buffer.from('café'), 'text/plain; charset=no-such-charset', 'text', false)).toBe('café');
  });

  it('drops a character that a truncation cut in half', () => {
    expect(decodeText(Buffer.from('ab€').subarray(0, 4), 'text/plain', 'text', true)).toBe('ab');
  });
});
