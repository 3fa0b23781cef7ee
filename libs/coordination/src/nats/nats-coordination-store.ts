import type { KV, NatsConnection } from 'nats';
import { connect } from 'nats';
import type { CoordinationStore, CoordinationStoreOptions, VersionedValue } from '../coordination.port';
import { assertCoordinationKey } from '../coordination.port';

/** JetStream's "wrong last sequence": the key is not at the revision the write expected. */
const WRONG_LAST_SEQUENCE = 10071;

export interface NatsCoordinationStoreOptions extends CoordinationStoreOptions {
  readonly servers: readonly string[];
  /** Deployments sharing one NATS keep their buckets apart (NATS_SUBJECT_PREFIX). */
  readonly namespace?: string;
}

/**
 * The distributed mode's store: a JetStream key-value bucket (history 1), whose per-key revision
 * makes every write a compare-and-set that all instances see in one order. Its own connection,
 * so the bus's reconnect logic and this store's never interfere.
 */
export async function createNatsCoordinationStore(options: NatsCoordinationStoreOptions): Promise<CoordinationStore> {
  // Back within half a second of NATS (not nats.js's default 2 s): sandbox calls wait on their lease meanwhile.
  const connection = await connect({
    servers: [...options.servers],
    name: `coordination-${options.bucket}`,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
  });
  try {
    const name = [options.namespace, options.bucket].filter(Boolean).join('_').replace(/\./g, '_');
    const kv = await connection.jetstream().views.kv(name, { history: 1, ...(options.ttlMs !== undefined ? { ttl: options.ttlMs } : {}) });
    return new NatsCoordinationStore(connection, kv);
  } catch (error) {
    await connection.close();
    throw new Error(
      `NATS JetStream key-value bucket "${options.bucket}" is unavailable (is JetStream on, nats-server -js?): ${messageOf(error)}`,
      { cause: error },
    );
  }
}

class NatsCoordinationStore implements CoordinationStore {
  constructor(
    private readonly connection: NatsConnection,
    private readonly kv: KV,
  ) {}

  async get(key: string): Promise<VersionedValue | undefined> {
    assertCoordinationKey(key);
    const entry = await this.kv.get(key);
    if (!entry || entry.operation !== 'PUT') return undefined;
    return { value: entry.string(), revision: entry.revision };
  }

  async create(key: string, value: string): Promise<number | undefined> {
    assertCoordinationKey(key);
    return orConflict(this.kv.create(key, value));
  }

  async update(key: string, value: string, revision: number): Promise<number | undefined> {
    assertCoordinationKey(key);
    return orConflict(this.kv.update(key, value, revision));
  }

  async delete(key: string, revision: number): Promise<boolean> {
    assertCoordinationKey(key);
    return (await orConflict(this.kv.delete(key, { previousSeq: revision }).then(() => revision))) !== undefined;
  }

  async close(): Promise<void> {
    if (!this.connection.isClosed()) await this.connection.drain();
  }
}

async function orConflict(write: Promise<number>): Promise<number | undefined> {
  try {
    return await write;
  } catch (error) {
    if ((error as { api_error?: { err_code?: number } }).api_error?.err_code === WRONG_LAST_SEQUENCE) return undefined;
    throw error;
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
