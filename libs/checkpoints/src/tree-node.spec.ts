import type { PieceLocation, TreeEntry } from '@app/task-domain';
import type { EncodedNode } from './tree-node';
import { MAX_LEAF_ENTRIES, decodeNode, encodeFolder } from './tree-node';

const file = (name: string, sha256 = 'a'.repeat(64), at: PieceLocation = { key: 'p/1.pack', offset: 0, length: 3 }): TreeEntry => ({
  name,
  kind: 'file',
  mode: 0o644,
  size: 3,
  mtimeMs: 1_700_000_000_123,
  sha256,
  at,
});

/** Stores inner nodes in a map, as a pack would, and says where. */
function nodeStore() {
  const stored = new Map<string, EncodedNode>();
  const store = (node: EncodedNode): PieceLocation => {
    stored.set(node.sha256, node);
    return { key: 'p/1.pack', offset: stored.size, length: node.bytes.length };
  };
  return { stored, store };
}

describe('checkpoint tree nodes', () => {
  it('keeps every field of every kind of entry, names in byte order', () => {
    const entries: TreeEntry[] = [
      file('b.txt'),
      { name: 'A', kind: 'dir', mode: 0o755, size: 0, mtimeMs: 0, sha256: 'b'.repeat(64), at: { key: 'k', offset: 9, length: 4 } },
      { name: 'link', kind: 'symlink', mode: 0o777, size: 0, mtimeMs: 5, sha256: 'c'.repeat(64), target: '/etc/passwd' },
      file('é.md'),
    ];
    const node = encodeFolder(entries, nodeStore().store);
    const decoded = decodeNode(node.bytes);
    expect(decoded).toEqual({ kind: 'leaf', entries: [entries[1], entries[0], entries[2], entries[3]] });
  });

  it('names a folder by what it holds, not by where its pieces are stored', () => {
    const here = encodeFolder([file('a', 'd'.repeat(64), { key: 'x', offset: 0, length: 1 })], nodeStore().store);
    const there = encodeFolder([file('a', 'd'.repeat(64), { key: 'y', offset: 7, length: 1 })], nodeStore().store);
    const other = encodeFolder([file('a', 'e'.repeat(64))], nodeStore().store);
    expect(here.sha256).toBe(there.sha256);
    expect(here.bytes).not.toEqual(there.bytes);
    expect(other.sha256).not.toBe(here.sha256);
  });

  it('splits a big folder into buckets, so one more name rewrites one small leaf and the buckets above it', () => {
    const names = Array.from({ length: 1000 }, (_, i) => `file-${i}.txt`);
    const before = nodeStore();
    const top = encodeFolder(
      names.map((n) => file(n)),
      before.store,
    );
    expect(decodeNode(top.bytes).kind).toBe('buckets');
    for (const node of before.stored.values()) {
      const decoded = decodeNode(node.bytes);
      if (decoded.kind === 'leaf') expect(decoded.entries.length).toBeLessThanOrEqual(MAX_LEAF_ENTRIES);
    }
    const after = nodeStore();
    const grown = encodeFolder(
      [...names, 'new.txt'].map((n) => file(n)),
      after.store,
    );
    expect(grown.sha256).not.toBe(top.sha256);
    const fresh = [...after.stored.keys()].filter((sha) => !before.stored.has(sha));
    // One leaf, and at most the buckets between it and the top (a few levels for 1,000 names).
    expect(fresh.length).toBeGreaterThanOrEqual(1);
    expect(fresh.length).toBeLessThanOrEqual(3);
  });

  it('refuses a node that is not one', () => {
    const { gzipSync } = jest.requireActual<typeof import('node:zlib')>('node:zlib');
    expect(() => decodeNode(gzipSync('{"x":1}'))).toThrow(/corrupt checkpoint node/);
    expect(() => decodeNode(gzipSync('{"b":[[99,"s","k",0,1]]}'))).toThrow(/bucket 99/);
  });
});
