import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import type { NatsBus } from '@app/bus/nats/nats-bus';
import { createNatsBus } from '@app/bus/nats/nats-bus';
import { assertNatsAnswers, natsUrlForTests } from '@app/bus/testing/nats-server';
import type { AppendNotifications, EventStore, StoredEvent } from '@app/event-store';
import { createPostgresEventStore } from '@app/event-store/postgres/postgres-event-store';
import { describeEventStoreContract } from '@app/event-store/testing/event-store.contract';
import { waitFor } from '@app/event-store/testing/wait-for';
import { busAppendNotifications } from './bus-append-notifications';

// The distributed mode's live feed: PostgreSQL holds the events, NATS only says "the store grew".

const connectionString = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const natsUrl = natsUrlForTests();
const newSchema = () => `es_nats_${randomBytes(6).toString('hex')}`;
const silent = { log: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined };
const openBus = () => createNatsBus({ servers: natsUrl, drainTimeoutMs: 200, logger: silent });

async function dropSchema(schema: string): Promise<void> {
  const client = new Client({ connectionString });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).finally(() => client.end());
}

/** A store as one process of the distributed mode opens it: its own pool, its own NATS connection. */
async function openProcessStore(schema: string, wrap: (n: AppendNotifications) => AppendNotifications = (n) => n, pollMs?: number) {
  const bus = await openBus();
  const store = await createPostgresEventStore({
    connectionString,
    schema,
    notifications: wrap(busAppendNotifications(bus, `postgres:${schema}`)),
    pollMs,
  });
  return { store, bus, close: async () => (await store.close(), await bus.close()) };
}

beforeAll(() => assertNatsAnswers(natsUrl));

describeEventStoreContract('postgres, notifications over NATS', async () => {
  const schema = newSchema();
  const { store, close } = await openProcessStore(schema);
  return { store, cleanup: async () => (await close(), await dropSchema(schema)) };
});

describe('append notifications over NATS', () => {
  let schema: string;
  const opened: { close(): Promise<void> }[] = [];
  beforeEach(() => (schema = newSchema()));
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((o) => o.close()));
    await dropSchema(schema);
  });
  const open = async (...args: Parameters<typeof openProcessStore> extends [string, ...infer R] ? R : never) => {
    const p = await openProcessStore(schema, ...args);
    opened.push(p);
    return p.store;
  };
  const append = (store: EventStore, streamId: string, n: number) =>
    store.appendToStream(
      streamId,
      Array.from({ length: n }, (_, i) => ({ type: 'Counted', data: { i }, schemaVersion: 1 })),
      'any',
    );

  it('every process sees every append, its own and the others, once and in global order', async () => {
    // No poll within the test: only NATS can tell each store about the other's appends.
    const stores = [await open(undefined, 3_600_000), await open(undefined, 3_600_000)];
    const seen: StoredEvent[][] = [[], []];
    stores.forEach((s, i) => s.onAppended((events) => seen[i].push(...events)));
    const results = await Promise.all(Array.from({ length: 20 }, (_, k) => append(stores[k % 2], `task-${k}`, 1 + (k % 3))));
    const all = results.flatMap((r) => r.events).sort((a, b) => a.globalPosition - b.globalPosition);
    for (const s of seen) {
      await waitFor(() => s.at(-1)?.globalPosition === all.at(-1)!.globalPosition, 10_000);
      expect(s.map((e) => e.globalPosition)).toEqual(all.map((e) => e.globalPosition));
    }
  });

  it('a notification lost on the way delays the events until the next poll, never loses them', async () => {
    const writer = await open();
    const deaf = await open((n) => ({ publish: n.publish, subscribe: () => () => undefined }), 200);
    const seen: StoredEvent[] = [];
    deaf.onAppended((events) => seen.push(...events));
    const { events } = await append(writer, 'task-lost', 3);
    await waitFor(() => seen.length === 3, 5_000);
    expect(seen).toEqual(events);
  });

  it('ignores the notices of another store sharing the same NATS', async () => {
    const bus: NatsBus = await openBus();
    try {
      const heard: number[] = [];
      const stop = busAppendNotifications(bus, 'postgres:mine').subscribe((p) => heard.push(p));
      busAppendNotifications(bus, 'postgres:theirs').publish(999_999);
      busAppendNotifications(bus, 'postgres:mine').publish(7);
      await waitFor(() => heard.length > 0, 5_000);
      await bus.flush();
      expect(heard).toEqual([7]);
      stop();
    } finally {
      await bus.close();
    }
  });
});
