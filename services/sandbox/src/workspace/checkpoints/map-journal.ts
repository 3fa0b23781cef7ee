const ABSENT = Symbol('absent');

/**
 * What was changed in maps taken over from a baseline: a hinted checkpoint edits the last one's
 * maps in place (copying 10,000 entries per step would cost more than the step's whole budget),
 * so it must be able to say what a key held before, and to put everything back if it fails.
 */
export class MapJournal {
  private readonly saved = new Map<Map<unknown, unknown>, Map<unknown, unknown>>();

  set<K, V>(map: Map<K, V>, key: K, value: V): void {
    this.save(map, key);
    map.set(key, value);
  }

  delete<K, V>(map: Map<K, V>, key: K): void {
    this.save(map, key);
    map.delete(key);
  }

  /** What `key` held before this journal's first change to it. */
  before<K, V>(map: Map<K, V>, key: K): V | undefined {
    const saved = this.saved.get(map as Map<unknown, unknown>);
    const value = saved?.has(key) ? saved.get(key) : map.get(key);
    return value === ABSENT ? undefined : (value as V | undefined);
  }

  /** The keys of `map` this journal changed. */
  changed<K>(map: Map<K, unknown>): Iterable<K> {
    return (this.saved.get(map as Map<unknown, unknown>)?.keys() ?? []) as Iterable<K>;
  }

  undo(): void {
    for (const [map, saved] of this.saved) {
      for (const [key, value] of saved) {
        if (value === ABSENT) map.delete(key);
        else map.set(key, value);
      }
    }
    this.saved.clear();
  }

  private save<K, V>(map: Map<K, V>, key: K): void {
    let saved = this.saved.get(map as Map<unknown, unknown>);
    if (!saved) this.saved.set(map as Map<unknown, unknown>, (saved = new Map()));
    if (!saved.has(key)) saved.set(key, map.has(key) ? map.get(key) : ABSENT);
  }
}
