/* eslint-disable no-control-regex -- these tests look for raw control characters in the output */
import { jsonLine, safeLine, safeText } from '../src/untrusted-text';

describe('untrusted text', () => {
  it('shows ESC, BEL, CR, DEL, C1 controls and bidi overrides as visible escapes, keeping newlines and tabs', () => {
    expect(safeText('a\u001b[2Jb\u0007c\rd\u007fe\u009b31mf\u202eg\u2066h\ti\nj')).toBe(
      'a\\x1b[2Jb\\x07c\\x0dd\\x7fe\\x9b31mf\\u202eg\\u2066h\ti\nj',
    );
  });

  it('keeps ordinary text, accents and emoji as they are', () => {
    expect(safeText('résumé 1.md — ok ✓ 🙂')).toBe('résumé 1.md — ok ✓ 🙂');
  });

  it('on one line, shows newlines and tabs escaped too', () => {
    expect(safeLine('ls\n\trm -rf /')).toBe('ls\\n\\trm -rf /');
  });

  it('writes JSON lines that parse back to the same value and carry no raw control or bidi character', () => {
    const value = { text: 'x\u001b]0;t\u0007 \u009b \u202e \u2028 \u007f' };
    const line = jsonLine(value);
    expect(line).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2028\u2029]/);
    expect(JSON.parse(line)).toEqual(value);
  });
});
