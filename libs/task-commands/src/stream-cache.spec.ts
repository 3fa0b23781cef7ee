import type { StoredEvent } from '@app/event-store';
import { StreamCache } from './stream-cache';

const event = (revision: number): StoredEvent => ({
  streamId: 's',
  revision,
  globalPosition: revision,
  type: 'E',
  data: revision,
  schemaVersion: 1,
  recordedAt: new Date(0).toISOString(),
});
const sum = (state: number, events: readonly StoredEvent[]) => events.reduce((acc, e) => acc + (e.data as number), state);

describe('StreamCache', () => {
  it('extends a stream only with the exact next revisions', () => {
    const cache = new StreamCache<number>(() => 0);
    expect(cache.extend('s', [event(1), event(2)], sum)).toMatchObject({ state: 3, revision: 2 });
    expect(cache.extend('s', [event(3)], sum)).toMatchObject({ state: 6, revision: 3 });
    expect(cache.get('s')?.events.map((e) => e.revision)).toEqual([1, 2, 3]);
  });

  it('drops a stream whose next events leave a gap', () => {
    const cache = new StreamCache<number>(() => 0);
    cache.extend('s', [event(1)], sum);
    expect(cache.extend('s', [event(3)], sum)).toBeUndefined();
    expect(cache.get('s')).toBeUndefined();
  });

  it('evicts the least recently used stream past its bound', () => {
    const cache = new StreamCache<number>(() => 0, 2);
    cache.extend('a', [event(1)], sum);
    cache.extend('b', [event(1)], sum);
    cache.get('a');
    cache.extend('c', [event(1)], sum);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBeDefined();
    expect(cache.get('c')).toBeDefined();
  });
});
