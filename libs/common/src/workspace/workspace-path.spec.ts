import { mkdir, realpath, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { TempWorkspace } from '../testing/temp-workspace';
import { createTempWorkspace } from '../testing/temp-workspace';
import { resolveInWorkspace, toWorkspaceRelative } from './workspace-path';
import { WorkspacePathError } from './workspace-path.error';

describe('resolveInWorkspace', () => {
  let ws: TempWorkspace;
  let realRoot: string;

  beforeEach(async () => {
    ws = await createTempWorkspace();
    realRoot = await realpath(ws.root);
  });
  afterEach(() => ws.cleanup());

  const refusal = (path: string, message: RegExp) =>
    expect(resolveInWorkspace(ws.root, path)).rejects.toMatchObject({
      name: 'WorkspacePathError',
      code: 'WORKSPACE.PATH_OUTSIDE',
      path,
      message: expect.stringMatching(message),
    });

  describe('refuses', () => {
    it.each([['..'], ['../x'], ['a/../../x'], ['./a/b/../../../x']])('%s, which climbs out of the root', (path) =>
      refusal(path, /is outside the workspace/),
    );

    it('an absolute path, even one inside the workspace', async () => {
      await refusal('/etc/passwd', /"\/etc\/passwd" is absolute/);
      await refusal(join(ws.root, 'a.txt'), /is absolute/);
    });

    it('a path with a NUL byte, naming it visibly', () => refusal('a\0b', /"a\\u0000b" contains a NUL byte/));

    it('an empty path or the root itself where a file is needed', async () => {
      await refusal('', /is empty/);
      await refusal('.', /is the workspace root/);
      await refusal('a/..', /is the workspace root/);
    });

    it('a symlink to a file outside the workspace', async () => {
      await ws.link('passwd', '/etc/passwd');
      await refusal('passwd', /leads outside the workspace through a symlink/);
    });

    it('a new file under a symlinked directory that points outside', async () => {
      await ws.link('escape', ws.outside);
      await refusal('escape/new/file.txt', /through a symlink/);
    });

    it('a path through a dangling symlink, whose target cannot be checked', async () => {
      await ws.link('dangling', join(ws.outside, 'missing'));
      await refusal('dangling', /symlink whose target does not exist/);
      await refusal('dangling/sub/file.txt', /symlink whose target does not exist/);
    });

    it('with a WorkspacePathError that callers can catch by class', async () => {
      await expect(resolveInWorkspace(ws.root, '../x')).rejects.toBeInstanceOf(WorkspacePathError);
    });
  });

  describe('accepts', () => {
    it('a path whose ".." stays inside and returns its real absolute path', async () => {
      await ws.file('a/b.txt', 'x');
      await expect(resolveInWorkspace(ws.root, 'a/../a/./b.txt')).resolves.toBe(join(realRoot, 'a/b.txt'));
    });

    it('a symlink inside the workspace pointing inside it, resolved to its target', async () => {
      await ws.file('real/notes.md', 'x');
      await ws.link('alias', 'real');
      await expect(resolveInWorkspace(ws.root, 'alias/notes.md')).resolves.toBe(join(realRoot, 'real/notes.md'));
    });

    it('a nested target that does not exist yet, as writes need', async () => {
      await expect(resolveInWorkspace(ws.root, 'new/deep/file.txt')).resolves.toBe(join(realRoot, 'new/deep/file.txt'));
    });

    it('the root itself when allowRoot is set', async () => {
      await expect(resolveInWorkspace(ws.root, '.', { allowRoot: true })).resolves.toBe(realRoot);
      await expect(resolveInWorkspace(ws.root, '', { allowRoot: true })).resolves.toBe(realRoot);
    });

    it('a root that is itself reached through a symlink', async () => {
      const linkedRoot = join(ws.outside, 'linked-root');
      await symlink(ws.root, linkedRoot);
      await mkdir(join(ws.root, 'src'));
      await expect(resolveInWorkspace(linkedRoot, 'src')).resolves.toBe(join(realRoot, 'src'));
    });
  });
});

describe('toWorkspaceRelative', () => {
  it('gives a slash-separated path, "." for the root', () => {
    expect(toWorkspaceRelative('/ws', '/ws/src/a.ts')).toBe('src/a.ts');
    expect(toWorkspaceRelative('/ws', '/ws')).toBe('.');
  });

  it('refuses a path outside the root, including a sibling sharing its prefix', () => {
    expect(() => toWorkspaceRelative('/ws', '/ws-other/a')).toThrow(WorkspacePathError);
    expect(() => toWorkspaceRelative('/ws', '/etc')).toThrow(/is outside the workspace/);
  });
});
