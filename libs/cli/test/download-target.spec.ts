import { join } from 'node:path';
import { downloadTarget, UnsafeArtifactPathError } from '../src/download-target';

describe('downloadTarget', () => {
  const out = '/home/me/out';

  it('writes an artifact under the folder without its downloads/ prefix, keeping subfolders', () => {
    expect(downloadTarget(out, 'downloads/report.md')).toBe(join(out, 'report.md'));
    expect(downloadTarget(out, 'downloads/sub/data.csv')).toBe(join(out, 'sub', 'data.csv'));
    expect(downloadTarget(out, 'notes.txt')).toBe(join(out, 'notes.txt'));
    // Letters past the control ranges are names like any other.
    expect(downloadTarget(out, 'downloads/résumé ½ 日本.txt')).toBe(join(out, 'résumé ½ 日本.txt'));
  });

  it.each([
    ['../escape.txt', 'climbs out'],
    ['downloads/../../x', 'climbs out'],
    ['downloads/a/../../../x', 'climbs out'],
    ['..', 'climbs out'],
    ['/etc/passwd', 'absolute'],
    ['C:/Windows/x', 'absolute'],
    ['downloads\\..\\..\\x', 'backslash'],
    ['downloads/a\u0000b', 'control character'],
    ['downloads/a\u001b[2J', 'control character'],
    ['downloads//x', 'empty'],
    ['downloads/./x', 'empty'],
    ['downloads/', 'empty'],
    ['', 'empty'],
  ])('refuses %j (%s)', (path, why) => {
    expect(() => downloadTarget(out, path)).toThrow(UnsafeArtifactPathError);
    expect(() => downloadTarget(out, path)).toThrow(why);
  });

  // Named, not printed: the test's own title would carry the character to the terminal.
  it.each([
    ['a tab', 'downloads/a\tb'],
    ['DEL', 'downloads/a\u007fb'],
    ['a C1 control (next line)', 'downloads/a\u0085b'],
    ['the 8-bit CSI', 'downloads/a\u009b2Jb'],
    ['a right-to-left override', 'downloads/gpj.\u202eexe'],
    ['a left-to-right embedding', 'downloads/a\u202ab'],
    ['a left-to-right isolate', 'downloads/a\u2066b'],
    ['a pop directional isolate', 'downloads/a\u2069b'],
  ])('refuses a path holding %s, like any control character', (_name, path) => {
    expect(() => downloadTarget(out, path)).toThrow(UnsafeArtifactPathError);
    expect(() => downloadTarget(out, path)).toThrow('control character');
  });
});
