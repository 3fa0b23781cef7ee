import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEventStoreFromConfig } from '../event-store.config';
import { aheadOfQueuedStatements } from '../statement-priority';
import { describeEventStoreContract } from '../testing/event-store.contract';
import { createEmbeddedEventStore } from './embedded-event-store';

const tempDir = () => mkdtemp(join(tmpdir(), 'event-store-'));

describeEventStoreContract('embedded (PGlite)', async () => {
  const dataDir = await tempDir();
  const store = await createEmbeddedEventStore({ dataDir }).catch(async (error: unknown) => {
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  });
  return {
    store,
    cleanup: async () => {
      await store.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
});

describe('embedded event store', () => {
  it('keeps events under DATA_DIR/eventstore across close and reopen, and continues positions', async () => {
    const dataDir = await tempDir();
    try {
      const first = await createEventStoreFromConfig({ DATA_DIR: dataDir });
      const written = await first.appendToStream('task-1', [{ type: 'TaskCreated', data: { n: 1 }, schemaVersion: 1 }], 'no_stream');
      await first.close();

      const reopened = await createEmbeddedEventStore({ dataDir: join(dataDir, 'eventstore') });
      try {
        expect(await reopened.readAll()).toEqual(written.events);
        const next = await reopened.appendToStream('task-1', [{ type: 'TaskStarted', data: {}, schemaVersion: 1 }], 1);
        expect(next.events[0]).toMatchObject({ revision: 2, globalPosition: written.lastGlobalPosition + 1 });
      } finally {
        await reopened.close();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 60_000);

  it('gives timers a turn during a long queue of statements, and puts statements asked to go ahead before those waiting', async () => {
    const dataDir = await tempDir();
    const store = await createEmbeddedEventStore({ dataDir });
    try {
      const done: string[] = [];
      let timerFired = false;
      setTimeout(() => (timerFired = true), 0);
      const queued = Array.from({ length: 50 }, (_, i) =>
        store.appendToStream(`queued-${i}`, [{ type: 'X', data: {}, schemaVersion: 1 }], 'any').then(() => {
          done.push(`queued-${i}`);
          return timerFired;
        }),
      );
      const ahead = aheadOfQueuedStatements(() => store.readStream('queued-0')).then(() => done.push('ahead'));
      const timerSeenBeforeLast = (await Promise.all(queued)).at(-1);
      await ahead;

      expect(timerSeenBeforeLast).toBe(true);
      // At most the statement already running when it was issued finishes before it.
      expect(done.indexOf('ahead')).toBeLessThanOrEqual(1);
      expect(done.filter((d) => d !== 'ahead')).toEqual(Array.from({ length: 50 }, (_, i) => `queued-${i}`));
    } finally {
      await store.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
