import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { ExpectedRevisionConflictError } from '../event-store.errors';
import type { AppendResult, EventStore, StoredEvent } from '../event-store.port';
import { describeEventStoreContract } from '../testing/event-store.contract';
import { waitFor } from '../testing/wait-for';
import { createPostgresEventStore } from './postgres-event-store';

const connectionString = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

// Every suite and test works in a schema of its own, dropped afterwards.
const newSchema = () => `es_test_${randomBytes(6).toString('hex')}`;

async function dropSchema(schema: string): Promise<void> {
  const client = new Client({ connectionString });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).finally(() => client.end());
}

async function withSchema<T>(use: (schema: string) => Promise<T>): Promise<T> {
  const schema = newSchema();
  try {
    return await use(schema);
  } finally {
    await dropSchema(schema);
  }
}

describeEventStoreContract('postgres', async () => {
  const schema = newSchema();
  const store = await createPostgresEventStore({ connectionString, schema });
  return {
    store,
    cleanup: async () => {
      await store.close();
      await dropSchema(schema);
    },
  };
});

describe('postgres event store', () => {
  it(
    'two stores on one database, like two processes, each see all appends through onAppended in global order',
    () =>
      withSchema(async (schema) => {
        const stores = [
          await createPostgresEventStore({ connectionString, schema }),
          await createPostgresEventStore({ connectionString, schema }),
        ];
        try {
          const seen: (readonly StoredEvent[])[][] = [[], []];
          stores.forEach((store, i) => store.onAppended((events) => seen[i].push(events)));

          const results = (await Promise.all([0, 1, 2, 3].map((w) => appendBatches(stores[w % 2], `task-${w}`, 10))))
            .flat()
            .sort((a, b) => a.lastGlobalPosition - b.lastGlobalPosition);
          const last = results.at(-1)!.lastGlobalPosition;

          for (const batches of seen) {
            await waitFor(() => batches.at(-1)?.at(-1)?.globalPosition === last);
            expect(batches).toEqual(results.map((r) => r.events));
          }
        } finally {
          await Promise.all(stores.map((s) => s.close()));
        }
      }),
    30_000,
  );

  it(
    'turns a unique violation from a racing writer into ExpectedRevisionConflictError',
    () =>
      withSchema(async (schema) => {
        const store = await createPostgresEventStore({ connectionString, schema });
        const rival = new Client({ connectionString, options: `-c search_path=${schema}` });
        await rival.connect();
        try {
          // The rival inserts revision 1 without committing, so the store's revision check passes
          // and its own insert of revision 1 waits on the unique index until the rival commits.
          await rival.query('BEGIN');
          await rival.query(`INSERT INTO events (global_position, stream_id, revision, type, schema_version, data)
                           VALUES (1000000, 'race', 1, 'Rival', 1, '{}')`);
          // Caught at once: the append fails as soon as the rival commits, possibly before the
          // COMMIT's own answer comes back, and a rejection nobody handled yet fails the test.
          const append = store.appendToStream('race', [{ type: 'Mine', data: {}, schemaVersion: 1 }], 'no_stream').catch((e: unknown) => e);
          await waitForLockWait();
          await rival.query('COMMIT');

          const error = await append;
          expect(error).toBeInstanceOf(ExpectedRevisionConflictError);
          expect(error).toMatchObject({ streamId: 'race', expected: 'no_stream', actual: 1 });
        } finally {
          await rival.end();
          await store.close();
        }
      }),
    30_000,
  );
});

async function appendBatches(store: EventStore, streamId: string, count: number): Promise<AppendResult[]> {
  const results: AppendResult[] = [];
  for (let i = 0; i < count; i++) {
    const events = Array.from({ length: (i % 2) + 1 }, () => ({ type: 'Counted', data: { i }, schemaVersion: 1 }));
    results.push(await store.appendToStream(streamId, events, i === 0 ? 'no_stream' : results.at(-1)!.nextExpectedRevision));
  }
  return results;
}

// Polls from a connection of its own: inside a transaction, pg_stat_activity is a frozen snapshot.
async function waitForLockWait(): Promise<void> {
  const observer = new Client({ connectionString });
  await observer.connect();
  try {
    await waitFor(async () => {
      const { rows } = await observer.query(
        `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%INSERT INTO events%'`,
      );
      return rows.length > 0;
    });
  } finally {
    await observer.end();
  }
}
