import { join } from 'node:path';
import { createEmbeddedEventStore } from './embedded/embedded-event-store';
import { EventStore } from './event-store.port';
import { createPostgresEventStore } from './postgres/postgres-event-store';

/**
 * `EVENT_STORE=postgres` with `DATABASE_URL` selects PostgreSQL (tables in `EVENT_STORE_SCHEMA`,
 * default `public`); unset (or `embedded`) selects
 * PGlite under `${DATA_DIR}/eventstore`. Anything else fails, rather than silently writing to a
 * local file that other processes cannot see.
 */
export async function createEventStoreFromConfig(env: NodeJS.ProcessEnv = process.env): Promise<EventStore> {
  const kind = env.EVENT_STORE || 'embedded';
  if (kind === 'postgres') {
    if (!env.DATABASE_URL) throw new Error('EVENT_STORE=postgres needs DATABASE_URL');
    return createPostgresEventStore({ connectionString: env.DATABASE_URL, schema: env.EVENT_STORE_SCHEMA || undefined });
  }
  if (kind !== 'embedded') throw new Error(`EVENT_STORE must be "embedded" or "postgres", not "${kind}"`);
  return createEmbeddedEventStore({ dataDir: join(env.DATA_DIR || './data', 'eventstore') });
}
