import type { ClientConfig } from 'pg';
import { Pool } from 'pg';
import type { AppendNotifications } from '../append-notifications';
import type { EventStore } from '../event-store.port';
import { ensureEventStoreSchema } from '../sql/event-store.schema';
import type { SqlClient, SqlQueryable } from '../sql/sql-client';
import { SqlEventStore } from '../sql/sql-event-store';
import { PgNotificationListener } from './pg-notification-listener';

export interface PostgresEventStoreOptions {
  readonly connectionString: string;
  /** Schema holding the tables, created when missing (default `public`); isolates tests. */
  readonly schema?: string;
  readonly poolSize?: number;
  /**
   * Carries "the store has grown" between processes instead of PostgreSQL's LISTEN/NOTIFY (the
   * distributed mode passes NATS). The store then also polls its last position every
   * `pollMs` (default 1000), so a notification lost on the way delays an event, never loses it.
   */
  readonly notifications?: AppendNotifications;
  readonly pollMs?: number;
}

// Short enough that the derived NOTIFY channel stays under PostgreSQL's 63-byte identifiers.
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,47}$/;

/** The distributed mode's store: every process shares one PostgreSQL database. */
export async function createPostgresEventStore(options: PostgresEventStoreOptions): Promise<EventStore> {
  const schema = options.schema ?? 'public';
  if (!SCHEMA_NAME.test(schema)) throw new Error(`invalid event store schema name: ${schema}`);
  // A connection string with its own `options` parameter overrides this; the check below catches it.
  const config: ClientConfig = { connectionString: options.connectionString, options: `-c search_path=${schema}` };
  const channel = `event_store_${schema}`;
  const reportError = (error: unknown) => console.error('event store (postgres):', error);
  const pool = new Pool({ ...config, max: options.poolSize ?? 10 });
  pool.on('error', reportError);
  const client = new PgPoolSqlClient(pool);

  if (options.notifications) return openWithNotifications(client, pool, schema, options.notifications, options.pollMs ?? 1000, reportError);

  let store: SqlEventStore | undefined;
  let announced = 0;
  const announce = (position: number) => (store ? store.announce(position) : (announced = Math.max(announced, position)));
  const listener = new PgNotificationListener(config, channel, {
    onNotify: (payload) => announce(Number(payload)),
    onReconnect: () => void lastPosition(client).then(announce, reportError),
    reportError,
  });
  try {
    await client.transaction((tx) => createSchema(tx, schema));
    // LISTEN before reading the start position, so that no commit falls between the two.
    await listener.start();
    store = await SqlEventStore.open({
      client,
      notifyChannel: channel,
      dispose: async () => {
        await listener.stop();
        await pool.end();
      },
    });
    if (announced) store.announce(announced);
    return store;
  } catch (error) {
    await listener.stop();
    await pool.end();
    throw error;
  }
}

async function openWithNotifications(
  client: PgPoolSqlClient,
  pool: Pool,
  schema: string,
  notifications: AppendNotifications,
  pollMs: number,
  reportError: (error: unknown) => void,
): Promise<EventStore> {
  let store: SqlEventStore | undefined;
  let announced = 0;
  const announce = (position: number) => (store ? store.announce(position) : (announced = Math.max(announced, position)));
  // Subscribed before reading the start position, so that no commit falls between the two.
  const stopListening = notifications.subscribe(announce);
  const poll = setInterval(() => void lastPosition(client).then(announce, reportError), pollMs);
  poll.unref();
  const release = async () => {
    clearInterval(poll);
    stopListening();
    await pool.end();
  };
  try {
    await client.transaction((tx) => createSchema(tx, schema));
    store = await SqlEventStore.open({ client, afterCommit: (position) => notifications.publish(position), dispose: release });
    if (announced) store.announce(announced);
    return store;
  } catch (error) {
    await release();
    throw error;
  }
}

async function createSchema(tx: SqlQueryable, schema: string): Promise<void> {
  // Concurrent CREATE ... IF NOT EXISTS can still collide in the catalog; starting processes queue.
  await tx.query(`SELECT pg_advisory_xact_lock(hashtext('event-store-schema'))`);
  // CREATE SCHEMA needs the CREATE privilege on the database even when the schema exists.
  const existing = await tx.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
  if (existing.length === 0) await tx.query(`CREATE SCHEMA ${schema}`);
  const [{ current }] = await tx.query<{ current: string | null }>('SELECT current_schema() AS current');
  if (current !== schema) throw new Error(`search_path resolves to ${current}, not schema ${schema}: remove "options" from DATABASE_URL`);
  await ensureEventStoreSchema(tx);
}

async function lastPosition(db: SqlQueryable): Promise<number> {
  const [{ last }] = await db.query<{ last: string }>('SELECT last FROM event_positions');
  return Number(last);
}

class PgPoolSqlClient implements SqlClient {
  constructor(private readonly pool: Pool) {}

  async query<Row>(text: string, params?: readonly unknown[]): Promise<Row[]> {
    return (await this.pool.query(text, params as unknown[])).rows as Row[];
  }

  async transaction<T>(fn: (tx: SqlQueryable) => Promise<T>): Promise<T> {
    const connection = await this.pool.connect();
    let broken: Error | undefined;
    try {
      await connection.query('BEGIN');
      const result = await fn({
        query: async <Row>(text: string, params?: readonly unknown[]) => (await connection.query(text, params as unknown[])).rows as Row[],
      });
      await connection.query('COMMIT');
      return result;
    } catch (error) {
      await connection.query('ROLLBACK').catch((e: Error) => (broken = e));
      throw error;
    } finally {
      // A connection that cannot even roll back is discarded rather than returned to the pool.
      connection.release(broken);
    }
  }
}
