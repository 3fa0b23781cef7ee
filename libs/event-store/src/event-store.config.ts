import { join } from 'node:path';
import { createEmbeddedEventStore } from './embedded/embedded-event-store';
import type { AppendNotifications } from './append-notifications';
import type { EventStore } from './event-store.port';

/**
 * Whether `env` selects the embedded store, which only one process can open at a time (SQLite
 * `locking_mode=EXCLUSIVE` on `DATA_DIR`): everything that appends to it runs in this process.
 */
export const eventStoreIsProcessExclusive = (env: NodeJS.ProcessEnv): boolean => eventStoreKind(env) === 'embedded';

/** EVENT_STORE, `embedded` when unset. */
const eventStoreKind = (env: NodeJS.ProcessEnv): string => env.EVENT_STORE || 'embedded';

/**
 * `EVENT_STORE=esdb` with `ESDB_URL` selects EventStoreDB (streams named `${ESDB_STREAM_PREFIX}…`,
 * default prefix `agentic.`); `EVENT_STORE=postgres` with `DATABASE_URL` selects PostgreSQL (tables
 * in `EVENT_STORE_SCHEMA`, default `public`); unset (or `embedded`) selects SQLite in
 * `${DATA_DIR}/eventstore/events.sqlite3`. Anything else fails, rather than silently writing to a local file
 * that other processes cannot see. The server adapters are loaded only when chosen: `pg` and the
 * EventStoreDB client (gRPC) would cost every all-in-one start CPU and memory for nothing.
 */
export async function createEventStoreFromConfig(
  env: NodeJS.ProcessEnv = process.env,
  /** PostgreSQL: carries append notifications instead of LISTEN/NOTIFY; given the store's id. */
  notificationsFor?: (storeId: string) => AppendNotifications,
): Promise<EventStore> {
  const kind = eventStoreKind(env);
  if (kind === 'esdb') {
    if (!env.ESDB_URL) throw new Error('EVENT_STORE=esdb needs ESDB_URL, a connection string such as esdb://127.0.0.1:2113?tls=false');
    const { createEsdbEventStore } = await import('./esdb/esdb-event-store');
    return createEsdbEventStore({ connectionString: env.ESDB_URL, streamPrefix: env.ESDB_STREAM_PREFIX || undefined });
  }
  if (kind === 'postgres') {
    if (!env.DATABASE_URL) throw new Error('EVENT_STORE=postgres needs DATABASE_URL');
    const schema = env.EVENT_STORE_SCHEMA || 'public';
    const { createPostgresEventStore } = await import('./postgres/postgres-event-store');
    return createPostgresEventStore({
      connectionString: env.DATABASE_URL,
      schema,
      notifications: notificationsFor?.(`postgres:${schema}`),
    });
  }
  if (kind !== 'embedded') throw new Error(`EVENT_STORE must be "embedded", "postgres" or "esdb", not "${kind}"`);
  return createEmbeddedEventStore({ dataDir: join(env.DATA_DIR || './data', 'eventstore') });
}
