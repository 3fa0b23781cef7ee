import type { TaskViewsStore } from '@app/read-models';
import type { ArtifactRecord } from '@app/task-domain';
import { ArtifactCatalog } from './artifact-catalog';

const record = (path: string): ArtifactRecord => ({
  path,
  name: path.split('/').pop()!,
  size: 3,
  sha256: 'a'.repeat(64),
  category: 'text',
  mimeType: 'text/plain',
  modifiedAt: '2026-01-01T00:00:00.000Z',
  objectKey: `artifacts/task_1/${path}`,
});

/** A catalog over one task's view; the catalog reads nothing else of it. */
function catalogOf(artifacts: ArtifactRecord[], escapingLinks: string[] = []): ArtifactCatalog {
  const views = { get: (taskId: string) => (taskId === 'task_1' ? { artifacts, escapingLinks } : undefined) };
  return new ArtifactCatalog(views as unknown as TaskViewsStore);
}

describe('ArtifactCatalog.locate', () => {
  it('finds a file named with a backslash by the path the listing gives', () => {
    const catalog = catalogOf([record('downloads/a\\b.txt')]);
    expect(catalog.list('task_1').map((f) => f.path)).toEqual(['downloads/a\\b.txt']);
    expect(catalog.locate('task_1', 'downloads/a\\b.txt')).toMatchObject({
      file: { path: 'downloads/a\\b.txt', name: 'a\\b.txt' },
      objectKey: 'artifacts/task_1/downloads/a\\b.txt',
    });
  });

  it('still reads any other backslash as a separator: outside is 400, unknown is 404', () => {
    const catalog = catalogOf([record('downloads/a\\b.txt'), record('downloads/sub/c.txt')]);
    expect(() => catalog.locate('task_1', 'downloads\\..\\..\\etc\\passwd')).toThrow('is outside the workspace');
    expect(catalog.locate('task_1', 'downloads\\sub\\c.txt').objectKey).toBe('artifacts/task_1/downloads/sub/c.txt');
    expect(() => catalog.locate('task_1', 'downloads/a/b.txt')).toThrow('not found');
  });

  it('refuses a path through a symlink leading out as outside, and one without a record as not found', () => {
    const catalog = catalogOf([record('downloads/r.md')], ['downloads/link']);
    expect(() => catalog.locate('task_1', 'downloads/link/passwd')).toThrow('downloads/link is a symlink leading out of it');
    expect(() => catalog.locate('task_1', 'downloads/nope.txt')).toThrow('not found');
    expect(() => catalog.locate('task_2', 'downloads/r.md')).toThrow('not found');
  });
});
