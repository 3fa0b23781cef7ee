import type { PieceLocation, TreeEntry } from '@app/task-domain';
import type { EncodedNode } from './tree-node';
import { MAX_LEAF_ENTRIES, compareNames, decodeNode, encodeFolder } from './tree-node';

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

  it('orders names as their UTF-8 bytes do, past U+FFFF too', () => {
    const pieces = ['a', 'b', 'é', '\u{e000}', '\u{ffff}', '\u{10000}', '😀', '\u{10ffff}', '~', ''];
    const names: string[] = [];
    for (const x of pieces) for (const y of pieces) for (const z of pieces) names.push(x + y + z);
    const byBytes = [...names].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    expect([...names].sort(compareNames)).toEqual(byBytes);
    // The plain string order differs here: the test would pass without the surrogate rule otherwise.
    expect([...names].sort()).not.toEqual(byBytes);
  });

  it('reuses the leaves of the last encoding whose entries are the same, and encodes as if from scratch', () => {
    const names = Array.from({ length: 300 }, (_, i) => `file-${i}.txt`);
    const first = encodeFolder(
      names.map((n) => file(n)),
      nodeStore().store,
    );
    const changed = names.map((n, i) => file(n, i === 7 ? 'f'.repeat(64) : undefined));
    const again = nodeStore();
    const reusing = encodeFolder(changed, again.store, first.trie);
    const scratch = nodeStore();
    const fresh = encodeFolder(changed, scratch.store);
    expect(reusing.sha256).toBe(fresh.sha256);
    expect(reusing.bytes).toEqual(fresh.bytes);
    expect([...again.stored.keys()].sort()).toEqual([...scratch.stored.keys()].sort());
    // Reused, not encoded again: every bucket but the changed one's is the last encoding's own.
    const kept = [...reusing.trie.buckets!.entries()].filter(([index, trie]) => first.trie.buckets!.get(index) === trie);
    expect(kept.length).toBe(first.trie.buckets!.size - 1);
    // A memo that no longer matches (another entry changed since) is not trusted.
    const other = names.map((n, i) => file(n, i === 8 ? 'e'.repeat(64) : undefined));
    expect(encodeFolder(other, nodeStore().store, reusing.trie).sha256).toBe(encodeFolder(other, nodeStore().store).sha256);
  });

  it("stores nodes as plain JSON naming each pack key once, and still reads the gzip'd nodes of earlier checkpoints", () => {
    const { gzipSync } = jest.requireActual<typeof import('node:zlib')>('node:zlib');
    const entries = [
      file('a', 'd'.repeat(64), { key: 'p/1.pack', offset: 0, length: 1 }),
      file('b', 'e'.repeat(64), { key: 'p/1.pack', offset: 1, length: 1 }),
    ];
    const node = encodeFolder(entries, nodeStore().store);
    const text = node.bytes.toString('utf8');
    expect(JSON.parse(text).k).toEqual(['p/1.pack']);
    expect(text.split('p/1.pack')).toHaveLength(2);
    const earlier = gzipSync(
      JSON.stringify({ e: entries.map((e) => [e.name, 0, e.mode, e.size, e.mtimeMs, e.sha256, e.at!.key, e.at!.offset, e.at!.length]) }),
    );
    expect(decodeNode(earlier)).toEqual(decodeNode(node.bytes));
    expect(decodeNode(node.bytes)).toEqual({ kind: 'leaf', entries });
    expect(() => decodeNode(Buffer.from('{"k":[],"e":[["a",0,420,3,5,"s",3,0,1]]}'))).toThrow(/no key 3/);
  });

  it('refuses a node that is not one', () => {
    const { gzipSync } = jest.requireActual<typeof import('node:zlib')>('node:zlib');
    expect(() => decodeNode(gzipSync('{"x":1}'))).toThrow(/corrupt checkpoint node/);
    expect(() => decodeNode(gzipSync('{"b":[[99,"s","k",0,1]]}'))).toThrow(/bucket 99/);
  });
});
