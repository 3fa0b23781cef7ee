import type { StoredEvent } from '../event-store.port';
import { BatchAssembler } from './batch-assembler';

const event = (streamId: string, revision: number, globalPosition: number): StoredEvent => ({
  streamId,
  revision,
  globalPosition,
  type: 'Counted',
  data: {},
  schemaVersion: 1,
  recordedAt: '2025-01-01T00:00:00.000Z',
});

describe('BatchAssembler', () => {
  it('returns each append once its last event arrives', () => {
    const assembler = new BatchAssembler();
    const [a1, a2, a3] = [event('a', 1, 10), event('a', 2, 20), event('a', 3, 30)];

    expect(assembler.push(a1, { index: 0, size: 3 })).toEqual([]);
    expect(assembler.push(a2, { index: 1, size: 3 })).toEqual([]);
    expect(assembler.idle).toBe(false);
    expect(assembler.push(a3, { index: 2, size: 3 })).toEqual([[a1, a2, a3]]);
    expect(assembler.idle).toBe(true);
  });

  it('keeps two appends to one stream apart', () => {
    const assembler = new BatchAssembler();
    const [a1, a2, a3] = [event('a', 1, 10), event('a', 2, 20), event('a', 3, 30)];

    const batches = [
      ...assembler.push(a1, { index: 0, size: 2 }),
      ...assembler.push(a2, { index: 1, size: 2 }),
      ...assembler.push(a3, { index: 0, size: 1 }),
    ];
    expect(batches).toEqual([[a1, a2], [a3]]);
  });

  it('hands out a batch that breaks off instead of holding it back', () => {
    const assembler = new BatchAssembler();
    const [a1, b1] = [event('a', 1, 10), event('b', 1, 20)];

    assembler.push(a1, { index: 0, size: 2 });
    expect(assembler.push(b1, { index: 0, size: 1 })).toEqual([[a1], [b1]]);
  });

  it('forgets a half-received batch on reset', () => {
    const assembler = new BatchAssembler();
    const [a1, a1again, a2] = [event('a', 1, 10), event('a', 1, 10), event('a', 2, 20)];

    assembler.push(a1, { index: 0, size: 2 });
    assembler.reset();
    expect(assembler.idle).toBe(true);
    expect([...assembler.push(a1again, { index: 0, size: 2 }), ...assembler.push(a2, { index: 1, size: 2 })]).toEqual([[a1again, a2]]);
  });
});
