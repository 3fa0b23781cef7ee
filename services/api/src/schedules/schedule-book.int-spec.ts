import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { ConflictError } from '@app/common';
import type { EventStore } from '@app/event-store';
import { createEmbeddedEventStore } from '@app/event-store/embedded/embedded-event-store';
import { createPostgresEventStore } from '@app/event-store/postgres/postgres-event-store';
import type { ScheduleCreated } from '@app/task-domain';
import { scheduleStreamId } from '@app/task-domain';
import { ScheduleBook } from './schedule-book';
import { scheduleRuns } from './schedule-runs';

// The exactly-once of schedules rests on the store's optimistic concurrency, so it is proved on
// the real stores: several books over one store stand for several firers (processes, instances)
// racing for the same due times, and for concurrent creates racing for a tenant's last place.

interface Fixture {
  readonly stores: EventStore[];
  cleanup(): Promise<void>;
}

const connectionString = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const fixtures: [string, () => Promise<Fixture>][] = [
  [
    'embedded SQLite (one store, as the all-in-one process has)',
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'schedule-book-'));
      const store = await createEmbeddedEventStore({ dataDir: join(dir, 'eventstore') });
      return {
        stores: [store, store, store],
        cleanup: async () => {
          await store.close();
          await rm(dir, { recursive: true, force: true });
        },
      };
    },
  ],
  [
    'PostgreSQL (a store per instance, as the distributed mode has)',
    async () => {
      const schema = `sched_test_${randomBytes(6).toString('hex')}`;
      const stores = [
        await createPostgresEventStore({ connectionString, schema }),
        await createPostgresEventStore({ connectionString, schema }),
        await createPostgresEventStore({ connectionString, schema }),
      ];
      return {
        stores,
        cleanup: async () => {
          await Promise.all(stores.map((s) => s.close()));
          const client = new Client({ connectionString });
          await client.connect();
          await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).finally(() => client.end());
        },
      };
    },
  ],
];

const created = (scheduleId: string, tenantId = 'tenant-a'): ScheduleCreated['data'] => ({
  scheduleId,
  tenantId,
  cron: '* * * * * *',
  timezone: 'UTC',
  task: { message: 'tick', autoExecute: true, showInHistory: true, env: {}, secretNames: [] },
  overlap: 'enqueue',
  paused: false,
  at: '2026-01-01T00:00:00.000Z',
});

describe.each(fixtures)('ScheduleBook over %s', (_name, makeFixture) => {
  let fixture: Fixture;
  let books: ScheduleBook[];
  beforeEach(async () => {
    fixture = await makeFixture();
    books = fixture.stores.map((store) => new ScheduleBook(store));
  });
  afterEach(async () => fixture.cleanup());

  it('records each due time once when three firers race for every one of 20', async () => {
    const id = `sched_${randomBytes(16).toString('hex')}`;
    await books[0].execute(id, { type: 'CreateSchedule', data: created(id) });
    const dueTimes = Array.from({ length: 20 }, (_, i) => new Date(Date.UTC(2026, 0, 1, 0, 0, i + 1)).toISOString());
    const won = await Promise.all(
      books.map(async (book, firer) => {
        let appended = 0;
        for (const dueAt of dueTimes) {
          const outcome = await book.execute(id, {
            type: 'RecordScheduleRun',
            data: { dueAt, at: dueAt, outcome: 'fired', taskId: `task_${firer}` },
          });
          appended += outcome.events.length;
        }
        return appended;
      }),
    );
    expect(won.reduce((a, b) => a + b, 0)).toBe(20);
    const runs = scheduleRuns(await fixture.stores[0].readStream(scheduleStreamId(id)));
    expect(runs.map((r) => r.dueAt)).toEqual(dueTimes);
  });

  it('lets concurrent creates take no more than MAX_SCHEDULES_PER_TENANT places, other tenants apart', async () => {
    const ids = Array.from({ length: 9 }, () => `sched_${randomBytes(16).toString('hex')}`);
    const results = await Promise.allSettled(ids.map((id, i) => books[i % books.length].register(id, 'tenant-a', 5)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(5);
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(ConflictError);
    await books[1].register(`sched_${randomBytes(16).toString('hex')}`, 'tenant-b', 5);
    const admitted = ids.filter((_, i) => results[i].status === 'fulfilled');
    await books[2].unregister(admitted[0]);
    await books[0].register(
      ids.find((_, i) => results[i].status === 'rejected')!,
      'tenant-a',
      5,
    );
    expect((await books[1].registered()).filter((e) => e.tenantId === 'tenant-a')).toHaveLength(5);
  });
});
