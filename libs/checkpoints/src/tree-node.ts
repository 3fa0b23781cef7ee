import { createHash } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import type { EntryKind, PieceLocation, TreeEntry } from '@app/task-domain';

/**
 * One folder of a checkpoint's Merkle tree, stored as JSON. A folder of at most
 * MAX_LEAF_ENTRIES names is one leaf node (its entries by name); a bigger one is a hash trie:
 * a bucket node of 16 children chosen by one hex digit of sha256(name), digit `level` at depth
 * `level`, so adding a name to a folder of 10,000 rewrites one small leaf and the buckets above
 * it, not the whole folder (docs/design/workspace-checkpoints.md, "Q5").
 */
export const MAX_LEAF_ENTRIES = 64;
const BUCKETS = 16;
/** sha256 has 64 hex digits: past them names cannot be told apart, so a leaf holds whatever is left. */
const MAX_LEVEL = 63;
const KINDS: readonly EntryKind[] = ['file', 'dir', 'symlink'];

/**
 * A node's stored form: its bytes, and the hash a parent names it by. The hash covers what the
 * folder holds, not where its pieces are stored, so the same folder stored twice (after a restart,
 * in a fork) is still the same folder: only the bytes name locations.
 */
export interface EncodedNode {
  readonly sha256: string;
  readonly bytes: Buffer;
}

/**
 * A folder's node as encoded, with what the next encoding of the same folder needs to skip the
 * leaves whose entries did not change: a step that touches one name of a folder of 10,000
 * re-encodes one leaf and the buckets above it, not 160 leaves (docs/design/workspace-checkpoints.md).
 */
export interface EncodedFolder extends EncodedNode {
  readonly trie: EncodedTrie;
}

/** What encodeFolder remembers of a node: a leaf's entries in name order, or a bucket node's children by index. */
export interface EncodedTrie {
  readonly sha256: string;
  readonly entries?: readonly TreeEntry[];
  readonly buckets?: ReadonlyMap<number, EncodedTrie>;
}

/** What a stored node holds: the entries of a leaf, or the occupied buckets of a trie node. */
export type DecodedNode =
  | { readonly kind: 'leaf'; readonly entries: readonly TreeEntry[] }
  | {
      readonly kind: 'buckets';
      readonly buckets: readonly { readonly index: number; readonly sha256: string; readonly at: PieceLocation }[];
    };

/** A row's pack key: written as its index in the node's key list `k`; nodes written before hold it inline. */
type KeyRef = number | string;
type EntryRow = [string, number, number, number, number, string, KeyRef?, number?, number?, string?];
type BucketRow = [number, string, KeyRef, number, number];
interface StoredNode {
  readonly k?: string[];
  readonly e?: EntryRow[];
  readonly b?: BucketRow[];
}

/** Where an encoded node gets stored: returns its location (a pack appends it, or finds it already there). */
export type StoreNode = (node: EncodedNode) => PieceLocation;

/**
 * The node of a folder holding `entries` (any order), storing the trie's inner nodes through
 * `store` as it goes; returns the top node, not yet stored. `previous`: the same folder's last
 * encoding, whose leaves are reused where their entries are the same.
 */
export function encodeFolder(entries: readonly TreeEntry[], store: StoreNode, previous?: EncodedTrie, level = 0): EncodedFolder {
  if (entries.length <= MAX_LEAF_ENTRIES || level > MAX_LEVEL) {
    // Sorted here, not above: sorting each leaf's few names costs less than sorting the whole folder.
    const sorted = byName(entries);
    if (previous?.entries && sameIdentities(previous.entries, sorted)) return leaf(sorted, previous);
    return leaf(sorted);
  }
  const groups = new Map<number, TreeEntry[]>();
  for (const entry of entries) {
    const index = parseInt(nameHash(entry.name)[level], 16);
    const group = groups.get(index);
    if (group) group.push(entry);
    else groups.set(index, [entry]);
  }
  const buckets = new Map<number, EncodedTrie>();
  const rows: [number, string, string, number, number][] = [...groups.entries()]
    .sort(([a], [b]) => a - b)
    .map(([index, group]) => {
      const child = encodeFolder(group, store, previous?.buckets?.get(index), level + 1);
      const at = store(child);
      buckets.set(index, child.trie);
      return [index, child.sha256, at.key, at.offset, at.length];
    });
  const sha256 = identityHash({ b: rows.map(([index, sha256]) => [index, sha256]) });
  return encoded(
    sha256,
    () =>
      withKeyList((keys) => ({ b: rows.map(([index, sha, key, offset, length]): BucketRow => [index, sha, keys(key), offset, length]) })),
    {
      sha256,
      buckets,
    },
  );
}

/** A leaf of `sorted`; named as `same` was (its entries are the same), without hashing them again. */
function leaf(sorted: readonly TreeEntry[], same?: EncodedTrie): EncodedFolder {
  const stored = () => withKeyList((keys) => ({ e: sorted.map((entry) => rowOf(entry, keys)) }));
  if (same) return encoded(same.sha256, stored, same);
  const sha256 = identityHash({ e: sorted.map((e) => [e.name, e.kind, e.mode, e.size, e.mtimeMs, e.sha256, e.target]) });
  return encoded(sha256, stored, { sha256, entries: sorted });
}

/** The fields a node's hash covers (encode's identity), compared entry by entry. */
function sameIdentities(a: readonly TreeEntry[], b: readonly TreeEntry[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const [x, y] = [a[i]!, b[i]!];
    if (x === y) continue;
    if (x.name !== y.name || x.kind !== y.kind || x.mode !== y.mode || x.size !== y.size || x.mtimeMs !== y.mtimeMs) return false;
    if (x.sha256 !== y.sha256 || x.target !== y.target) return false;
  }
  return true;
}

export function decodeNode(bytes: Buffer): DecodedNode {
  const gzipped = bytes[0] === 0x1f && bytes[1] === 0x8b;
  const json = JSON.parse((gzipped ? gunzipSync(bytes) : bytes).toString('utf8')) as StoredNode;
  const keyOf = (key: KeyRef): string => {
    const named = typeof key === 'number' ? json.k?.[key] : key;
    if (typeof named !== 'string') throw new Error(`corrupt checkpoint node: no key ${key}`);
    return named;
  };
  if (Array.isArray(json.e)) return { kind: 'leaf', entries: json.e.map((row) => entryOf(row, keyOf)) };
  if (Array.isArray(json.b)) {
    return {
      kind: 'buckets',
      buckets: json.b.map(([index, sha256, key, offset, length]) => {
        if (!Number.isInteger(index) || index < 0 || index >= BUCKETS) throw new Error(`corrupt checkpoint node: bucket ${index}`);
        return { index, sha256, at: { key: keyOf(key), offset, length } };
      }),
    };
  }
  throw new Error('corrupt checkpoint node: neither entries nor buckets');
}

/**
 * Byte order of the UTF-8 names, as the workspace listing and `ls -f | sort` in the C locale give
 * them, without encoding them (a step sorts every touched folder's names).
 */
export function compareNames(a: string, b: string): number {
  if (a === b) return 0;
  const shorter = Math.min(a.length, b.length);
  for (let i = 0; i < shorter; i++) {
    const [x, y] = [a.charCodeAt(i), b.charCodeAt(i)];
    if (x !== y) return utf8Rank(x) - utf8Rank(y);
  }
  return a.length - b.length;
}

/**
 * UTF-16 code units in the order of the UTF-8 bytes they stand for: the two are the same but for
 * surrogates (halves of code points past U+FFFF), which UTF-8 puts after U+E000–U+FFFF.
 */
function utf8Rank(unit: number): number {
  if (unit < 0xd800) return unit;
  return unit >= 0xe000 ? unit - 0x800 : unit + 0x2000;
}

function identityHash(identity: unknown): string {
  return createHash('sha256').update(JSON.stringify(identity)).digest('hex');
}

/**
 * Serialised when first asked for: a writer that holds a node of this hash already never asks
 * (a changed folder's top is encoded again at each step, but stored only when it changed). Plain
 * JSON, not gzip'd as nodes were at first: a step stores a few dozen small nodes and zlib cost
 * ~50 µs a call; what it saved was mostly the pack key repeated in each row, now listed once.
 */
function encoded(sha256: string, stored: () => StoredNode, trie: EncodedTrie): EncodedFolder {
  let bytes: Buffer | undefined;
  return {
    sha256,
    trie,
    get bytes() {
      return (bytes ??= Buffer.from(JSON.stringify(stored())));
    },
  };
}

/** A node's rows made with `build`, their pack keys named by index in the node's `k` list. */
function withKeyList(build: (keyRef: (key: string) => number) => StoredNode): StoredNode {
  const keys: string[] = [];
  const indexes = new Map<string, number>();
  const node = build((key) => {
    let index = indexes.get(key);
    if (index === undefined) indexes.set(key, (index = keys.push(key) - 1));
    return index;
  });
  return { k: keys, ...node };
}

/** Entries in byte order of their UTF-8 names. */
function byName(entries: readonly TreeEntry[]): TreeEntry[] {
  return [...entries].sort((a, b) => compareNames(a.name, b.name));
}

// A changed folder's trie is encoded again at every step that touches it: its names' hashes are
// kept (bounded; forgotten all at once when full, as they are cheap to compute again).
const NAME_HASHES = new Map<string, string>();
const NAME_HASHES_KEPT = 50_000;

function nameHash(name: string): string {
  let hash = NAME_HASHES.get(name);
  if (hash === undefined) {
    if (NAME_HASHES.size >= NAME_HASHES_KEPT) NAME_HASHES.clear();
    hash = createHash('sha256').update(name).digest('hex');
    NAME_HASHES.set(name, hash);
  }
  return hash;
}

function rowOf(e: TreeEntry, keyRef: (key: string) => number): EntryRow {
  const row: EntryRow = [e.name, KINDS.indexOf(e.kind), e.mode, e.size, e.mtimeMs, e.sha256];
  if (e.at) row.push(keyRef(e.at.key), e.at.offset, e.at.length);
  if (e.target !== undefined) {
    while (row.length < 9) row.push(undefined);
    row.push(e.target);
  }
  return row;
}

function entryOf(row: EntryRow, keyOf: (key: KeyRef) => string): TreeEntry {
  const [name, kindIndex, mode, size, mtimeMs, sha256, key, offset, length, target] = row;
  const kind = KINDS[kindIndex];
  if (typeof name !== 'string' || kind === undefined) throw new Error('corrupt checkpoint node: bad entry');
  return {
    name,
    kind,
    mode,
    size,
    mtimeMs,
    sha256,
    ...(key !== undefined && key !== null ? { at: { key: keyOf(key), offset: offset ?? 0, length: length ?? 0 } } : {}),
    ...(target !== undefined && target !== null ? { target } : {}),
  };
}
