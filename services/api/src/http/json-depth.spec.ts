import { exceedsJsonDepth, exceedsValueDepth } from './json-depth';

const nested = (levels: number, open = '{"a":', close = '}') => open.repeat(levels) + '1' + close.repeat(levels);

describe('exceedsJsonDepth', () => {
  it('accepts nesting up to the limit, objects and arrays alike', () => {
    expect(exceedsJsonDepth(nested(32), 32)).toBe(false);
    expect(exceedsJsonDepth(nested(32, '[', ']'), 32)).toBe(false);
    expect(exceedsJsonDepth('{"a":[{"b":[1]}]}', 4)).toBe(false);
  });

  it('refuses one level more', () => {
    expect(exceedsJsonDepth(nested(33), 32)).toBe(true);
    expect(exceedsJsonDepth(nested(33, '[', ']'), 32)).toBe(true);
    expect(exceedsJsonDepth('{"a":[{"b":[1]}]}', 3)).toBe(true);
  });

  it('counts siblings, not their sum', () => {
    expect(exceedsJsonDepth(`[${'[1],'.repeat(10_000)}[1]]`, 2)).toBe(false);
  });

  it('ignores brackets inside strings, escaped quotes included', () => {
    expect(exceedsJsonDepth(JSON.stringify({ text: '[[[[{{{{' }), 1)).toBe(false);
    expect(exceedsJsonDepth(JSON.stringify({ text: 'a "quoted" [[[ \\ {{{' }), 1)).toBe(false);
    expect(exceedsJsonDepth('{"a\\"[[[":1}', 1)).toBe(false);
    expect(exceedsJsonDepth('{"a\\\\":[[1]]}', 2)).toBe(true);
  });

  it('reads UTF-8 bytes the same as the string', () => {
    const text = JSON.stringify({ ключ: ['🚀', { é: '[' }] });
    expect(exceedsJsonDepth(Buffer.from(text), 3)).toBe(false);
    expect(exceedsJsonDepth(Buffer.from(text), 2)).toBe(true);
  });

  // How fast it scans is benchmark 7 (bench/moved-bounds.ts), not a test: timing flakes under load.
  it('scans a million levels, stopping at the limit', () => {
    expect(exceedsJsonDepth('['.repeat(1_000_000), 32)).toBe(true);
    expect(exceedsJsonDepth(`"${'['.repeat(1_000_000)}"`, 32)).toBe(false);
  });
});

describe('exceedsValueDepth', () => {
  it('bounds a parsed value as exceedsJsonDepth bounds its text, without recursing', () => {
    expect(exceedsValueDepth(JSON.parse(nested(32)), 32)).toBe(false);
    expect(exceedsValueDepth(JSON.parse(nested(33, '[', ']')), 32)).toBe(true);
    expect(exceedsValueDepth(JSON.parse(nested(100_000)), 32)).toBe(true);
    expect(exceedsValueDepth('text', 0)).toBe(false);
  });
});
