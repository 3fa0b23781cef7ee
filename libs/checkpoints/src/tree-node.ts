import { createHash } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import type { EntryKind, PieceLocation, TreeEntry } from '@app/task-domain';

/**
 * One folder of a checkpoint's Merkle tree, stored as gzip'd JSON. A folder of at most
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

/** What a stored node holds: the entries of a leaf, or the occupied buckets of a trie node. */
export type DecodedNode =
  | { readonly kind: 'leaf'; readonly entries: readonly TreeEntry[] }
  | {
      readonly kind: 'buckets';
      readonly buckets: readonly { readonly index: number; readonly sha256: string; readonly at: PieceLocation }[];
    };

type EntryRow = [string, number, number, number, number, string, string?, number?, number?, string?];
type BucketRow = [number, string, string, number, number];

/** Where an encoded node gets stored: returns its location (a pack appends it, or finds it already there). */
export type StoreNode = (node: EncodedNode) => PieceLocation;

/**
 * The node of a folder holding `entries` (any order), storing the trie's inner nodes through
 * `store` as it goes; returns the top node, not yet stored.
 */
export function encodeFolder(entries: readonly TreeEntry[], store: StoreNode, level = 0): EncodedNode {
  // A bucket's entries come sorted from the level above.
  const sorted = level === 0 ? byName(entries) : entries;
  if (sorted.length <= MAX_LEAF_ENTRIES || level > MAX_LEVEL) {
    return encode({ e: sorted.map(rowOf) }, { e: sorted.map((e) => [e.name, e.kind, e.mode, e.size, e.mtimeMs, e.sha256, e.target]) });
  }
  const groups = new Map<number, TreeEntry[]>();
  for (const entry of sorted) {
    const index = parseInt(nameHash(entry.name)[level], 16);
    const group = groups.get(index);
    if (group) group.push(entry);
    else groups.set(index, [entry]);
  }
  const rows: BucketRow[] = [...groups.entries()]
    .sort(([a], [b]) => a - b)
    .map(([index, group]) => {
      const child = encodeFolder(group, store, level + 1);
      const at = store(child);
      return [index, child.sha256, at.key, at.offset, at.length];
    });
  return encode({ b: rows }, { b: rows.map(([index, sha256]) => [index, sha256]) });
}

export function decodeNode(bytes: Buffer): DecodedNode {
  const json = JSON.parse(gunzipSync(bytes).toString('utf8')) as { e?: EntryRow[]; b?: BucketRow[] };
  if (Array.isArray(json.e)) return { kind: 'leaf', entries: json.e.map(entryOf) };
  if (Array.isArray(json.b)) {
    return {
      kind: 'buckets',
      buckets: json.b.map(([index, sha256, key, offset, length]) => {
        if (!Number.isInteger(index) || index < 0 || index >= BUCKETS) throw new Error(`corrupt checkpoint node: bucket ${index}`);
        return { index, sha256, at: { key, offset, length } };
      }),
    };
  }
  throw new Error('corrupt checkpoint node: neither entries nor buckets');
}

/** Byte order of the UTF-8 names, as the workspace listing and `ls -f | sort` in the C locale give them. */
export function compareNames(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

function encode(stored: unknown, identity: unknown): EncodedNode {
  const sha256 = createHash('sha256').update(JSON.stringify(identity)).digest('hex');
  let bytes: Buffer | undefined;
  // Compressed when first asked for: a writer that holds a node of this hash already never asks
  // (a changed folder of 10,000 names re-encodes its trie, but stores only the buckets that changed).
  return {
    sha256,
    get bytes() {
      return (bytes ??= gzipSync(JSON.stringify(stored), { level: 6 }));
    },
  };
}

/** Entries in byte order of their UTF-8 names, each name encoded once (not once per comparison). */
function byName(entries: readonly TreeEntry[]): TreeEntry[] {
  return entries
    .map((entry) => ({ key: Buffer.from(entry.name), entry }))
    .sort((a, b) => Buffer.compare(a.key, b.key))
    .map(({ entry }) => entry);
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

function rowOf(e: TreeEntry): EntryRow {
  const row: EntryRow = [e.name, KINDS.indexOf(e.kind), e.mode, e.size, e.mtimeMs, e.sha256];
  if (e.at) row.push(e.at.key, e.at.offset, e.at.length);
  if (e.target !== undefined) {
    while (row.length < 9) row.push(undefined);
    row.push(e.target);
  }
  return row;
}

function entryOf(row: EntryRow): TreeEntry {
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
    ...(key !== undefined && key !== null ? { at: { key, offset: offset ?? 0, length: length ?? 0 } } : {}),
    ...(target !== undefined && target !== null ? { target } : {}),
  };
}
