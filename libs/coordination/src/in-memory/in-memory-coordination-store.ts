import type { CoordinationStore, CoordinationStoreOptions, VersionedValue } from '../coordination.port';
import { assertCoordinationKey } from '../coordination.port';

interface Entry extends VersionedValue {
  readonly writtenAt: number;
}

/** The all-in-one mode's store: one process, so a Map is the truth. Honours the bucket's TTL like NATS. */
export class InMemoryCoordinationStore implements CoordinationStore {
  private readonly entries = new Map<string, Entry>();
  private revision = 0;

  constructor(
    private readonly options: CoordinationStoreOptions,
    private readonly now: () => number = Date.now,
  ) {}

  async get(key: string): Promise<VersionedValue | undefined> {
    assertCoordinationKey(key);
    const entry = this.live(key);
    return entry && { value: entry.value, revision: entry.revision };
  }

  async create(key: string, value: string): Promise<number | undefined> {
    assertCoordinationKey(key);
    if (this.live(key)) return undefined;
    return this.write(key, value);
  }

  async update(key: string, value: string, revision: number): Promise<number | undefined> {
    assertCoordinationKey(key);
    if (this.live(key)?.revision !== revision) return undefined;
    return this.write(key, value);
  }

  async delete(key: string, revision: number): Promise<boolean> {
    assertCoordinationKey(key);
    if (this.live(key)?.revision !== revision) return false;
    return this.entries.delete(key);
  }

  async close(): Promise<void> {
    this.entries.clear();
  }

  private live(key: string): Entry | undefined {
    const entry = this.entries.get(key);
    if (entry && this.options.ttlMs !== undefined && this.now() - entry.writtenAt >= this.options.ttlMs) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }

  private write(key: string, value: string): number {
    const revision = ++this.revision;
    this.entries.set(key, { value, revision, writtenAt: this.now() });
    return revision;
  }
}
