import { join } from 'node:path';
import { downloadTarget, UnsafeArtifactPathError } from '../src/download-target';

describe('downloadTarget', () => {
  const out = '/home/me/out';

  it('writes an artifact under the folder without its downloads/ prefix, keeping subfolders', () => {
    expect(downloadTarget(out, 'downloads/report.md')).toBe(join(out, 'report.md'));
    expect(downloadTarget(out, 'downloads/sub/data.csv')).toBe(join(out, 'sub', 'data.csv'));
    expect(downloadTarget(out, 'notes.txt')).toBe(join(out, 'notes.txt'));
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
});
