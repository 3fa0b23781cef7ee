import { cut, findTextFault, textFault } from './text-fault';

describe('textFault', () => {
  it.each([
    ['plain text', 'hello'],
    ['an emoji (a well-formed surrogate pair)', 'ship it \ud83d\ude80'],
    ['other control characters', 'tab\tnewline\n\u0001'],
    ['an empty string', ''],
  ])('accepts %s', (_case, text) => {
    expect(textFault(text)).toBeUndefined();
  });

  it.each([
    ['a NUL', 'abc\u0000def', 'must not contain a NUL character'],
    ['a lone high surrogate', 'a\ud800b', 'must not contain a lone UTF-16 surrogate (not valid Unicode)'],
    ['a high surrogate at the end', 'a\ud800', 'must not contain a lone UTF-16 surrogate (not valid Unicode)'],
    ['a lone low surrogate', '\udc00a', 'must not contain a lone UTF-16 surrogate (not valid Unicode)'],
    ['two high surrogates in a row', '\ud800\ud800\udc00', 'must not contain a lone UTF-16 surrogate (not valid Unicode)'],
  ])('refuses %s', (_case, text, why) => {
    expect(textFault(text)).toBe(why);
  });
});

describe('findTextFault', () => {
  it('names the path of the first bad string inside nested objects and arrays', () => {
    const value = { docs: { url: 'https://x', headers: { 'X-Key': 'a\u0000b' } }, list: ['\ud800'] };
    expect(findTextFault(value, 'mcpServers')).toBe('mcpServers.docs.headers.X-Key must not contain a NUL character');
    expect(findTextFault({ list: ['ok', '\ud800'] }, 'field')).toBe(
      'field.list.1 must not contain a lone UTF-16 surrogate (not valid Unicode)',
    );
  });

  it('checks keys too, and cuts a long key in the message', () => {
    const key = `${'k'.repeat(5000)}\u0000`;
    const found = findTextFault({ [key]: 'v' }, 'mcpServers')!;
    expect(found).toBe(`mcpServers: key "${'k'.repeat(100)}…" must not contain a NUL character`);
  });

  it('passes numbers, booleans, null and clean structures', () => {
    expect(findTextFault({ a: 1, b: true, c: null, d: ['x', { e: 'y' }] }, 'f')).toBeUndefined();
    expect(findTextFault(42, 'f')).toBeUndefined();
  });
});

describe('cut', () => {
  it('keeps short names and cuts long ones with an ellipsis', () => {
    expect(cut('short')).toBe('short');
    expect(cut('x'.repeat(150))).toBe(`${'x'.repeat(100)}…`);
  });
});
