import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { buffer } from 'node:stream/consumers';
import { Client as TemporalClient, Connection } from '@temporalio/client';
import { createObjectStore, objectStoreConfigFromEnv } from '@app/object-store';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as connectNats } from 'nats';
import { Client } from 'pg';
import type { PersistedItem } from './persisted-files';
import { persistedFiles } from './persisted-files';
import type { ServiceProcess } from './service-process';
import { freePort, startEntryProcess } from './service-process';

/** The servers a distributed deployment needs; scripts/test.sh starts them and exports these. */
export function distributedInfraFromEnv(): Record<string, string> {
  const required = ['DATABASE_URL', 'NATS_URL', 'TEMPORAL_ADDRESS', 'MINIO_ENDPOINT', 'MINIO_ACCESS_KEY', 'MINIO_SECRET_KEY'];
  const missing = required.filter((name) => !process.env[name]);
  if (missing.length > 0) {
    throw new Error(`the distributed suite needs ${missing.join(', ')}: run it through \`npm test\` (scripts/test.sh starts the servers)`);
  }
  return Object.fromEntries(required.map((name) => [name, process.env[name]!]));
}

export interface DeploymentShape {
  readonly api: number;
  readonly orchestrator: number;
  readonly sandbox: number;
  readonly artifacts: number;
}

export interface ServiceInstance {
  readonly service: keyof DeploymentShape;
  readonly index: number;
  /** Where its /healthz, /readyz and /metrics answer: the API's own port, HEALTH_PORT for the others. */
  readonly healthUrl: string;
  process: ServiceProcess;
}

export interface DistributedDeployment {
  /** Base URLs of the API instances. */
  readonly apiUrls: string[];
  readonly instances: ServiceInstance[];
  /**
   * Env every instance shares (stores, bus, runner, and SECRETS_KEY: every process must open the
   * same envelopes); the secrets of tests never go here.
   */
  readonly sharedEnv: Record<string, string>;
  /** The sandbox instances' shared DATA_DIR: `workspaces/<taskId>` lives here. */
  readonly sandboxVolume: string;
  /** Restarts one instance (same env, same DATA_DIR), e.g. after kill -9; `override` changes its env for this start only. */
  restart(instance: ServiceInstance, override?: Record<string, string>): Promise<void>;
  output(): string;
  /**
   * Stops every instance (gracefully, so what they write is flushed), then returns everything the
   * deployment persisted, for leak checks: each file under every instance's DATA_DIR, each row of
   * the event store, each object in MinIO, each Temporal workflow history, each message of the
   * deployment's NATS JetStream streams (its coordination buckets), each instance's log.
   */
  stopAndCollectPersisted(): Promise<PersistedItem[]>;
  /**
   * Stops every instance and removes what the run made on the shared servers: its schema, its
   * files and its coordination buckets (JetStream streams `KV_<NATS_SUBJECT_PREFIX>_*`); fails if
   * a bucket of the run is still there afterwards.
   */
  close(): Promise<void>;
}

export type { PersistedItem };

const ENTRIES: Record<keyof DeploymentShape, string> = {
  api: 'services/api/src/main.ts',
  orchestrator: 'services/orchestrator/src/main.ts',
  sandbox: 'services/sandbox/src/main.ts',
  artifacts: 'services/artifacts/src/main.ts',
};

/**
 * Every service as its own OS process over real PostgreSQL (a fresh schema), NATS, Temporal (a
 * fresh task queue) and MinIO (a fresh bucket). Each instance gets its own DATA_DIR, except the sandbox instances,
 * which share one workspace volume as they would in a cluster.
 */
export async function startDistributedDeployment(shape: DeploymentShape, extraEnv: Record<string, string>): Promise<DistributedDeployment> {
  const infra = distributedInfraFromEnv();
  const run = randomBytes(4).toString('hex');
  const root = await mkdtemp(join(tmpdir(), 'ats-dist-'));
  // The sandbox's commands run as per-task uids that must traverse down to their workspace.
  await chmod(root, 0o711);
  const sharedEnv: Record<string, string> = {
    ...infra,
    EVENT_STORE: 'postgres',
    EVENT_STORE_SCHEMA: `dist_${run}`,
    BUS: 'nats',
    // Its own subjects: a deployment left running by another test must never take this one's calls.
    NATS_SUBJECT_PREFIX: `dist-${run}`,
    OBJECT_STORE: 'minio',
    MINIO_BUCKET: `ats-dist-${run}`,
    RUNNER: 'temporal',
    TEMPORAL_TASK_QUEUE: `agent-loop-${run}`,
    // One key for every api, orchestrator and sandbox process, as a real deployment needs.
    SECRETS_KEY: randomBytes(32).toString('base64'),
    ...extraEnv,
  };
  const instances: ServiceInstance[] = [];
  const envOf = new Map<ServiceInstance, Record<string, string>>();
  const apiUrls: string[] = [];

  const launch = async (instance: ServiceInstance, override: Record<string, string> = {}) => {
    const env = { ...envOf.get(instance)!, ...override };
    instance.process = await startEntryProcess(
      ENTRIES[instance.service],
      env,
      instance.service === 'api' ? { healthUrl: `http://127.0.0.1:${env.PORT}` } : { readyLine: `${instance.service} service running` },
    );
  };

  try {
    // Services in dependency order; the instances of one service start side by side.
    for (const service of ['artifacts', 'sandbox', 'orchestrator', 'api'] as const) {
      const batch: ServiceInstance[] = [];
      for (let index = 0; index < shape[service]; index++) {
        const dataDir = service === 'sandbox' ? join(root, 'sandbox-volume') : join(root, `${service}-${index}`);
        const env: Record<string, string> = { ...sharedEnv, DATA_DIR: dataDir };
        if (service === 'api') {
          env.PORT = String(await freePort());
          apiUrls.push(`http://127.0.0.1:${env.PORT}`);
        } else {
          env.HEALTH_PORT = String(await freePort());
        }
        const healthUrl = `http://127.0.0.1:${env.PORT ?? env.HEALTH_PORT}`;
        const instance = { service, index, healthUrl } as ServiceInstance;
        envOf.set(instance, env);
        batch.push(instance);
      }
      const launched = await Promise.allSettled(batch.map((instance) => launch(instance)));
      instances.push(...batch.filter((_, i) => launched[i].status === 'fulfilled'));
      const failed = launched.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
    }
  } catch (error) {
    await Promise.all(instances.map((i) => i.process.stop().catch(() => undefined)));
    await removeCoordinationBuckets(sharedEnv.NATS_URL, sharedEnv.NATS_SUBJECT_PREFIX).catch(() => undefined);
    await rm(root, { recursive: true, force: true });
    throw error;
  }

  return {
    apiUrls,
    instances,
    sharedEnv,
    sandboxVolume: join(root, 'sandbox-volume'),
    restart: launch,
    output: () => instances.map((i) => `--- ${i.service}#${i.index}\n${i.process.output()}`).join('\n'),
    async stopAndCollectPersisted() {
      await Promise.all(instances.map((i) => i.process.stop().catch(() => undefined)));
      return [
        ...(await persistedFiles(root)),
        ...(await eventRows(infra.DATABASE_URL, sharedEnv.EVENT_STORE_SCHEMA)),
        ...(await bucketObjects(sharedEnv)),
        ...(await workflowHistories(sharedEnv)),
        ...(await jetStreamMessages(sharedEnv.NATS_URL, run)),
        ...instances.map((i) => ({ where: `log of ${i.service}#${i.index}`, bytes: Buffer.from(i.process.output()) })),
      ];
    },
    async close() {
      await Promise.all(instances.map((i) => i.process.stop().catch(() => undefined)));
      await endScheduleWorkflows(sharedEnv);
      await dropSchema(infra.DATABASE_URL, sharedEnv.EVENT_STORE_SCHEMA);
      await rm(root, { recursive: true, force: true });
      await removeCoordinationBuckets(sharedEnv.NATS_URL, sharedEnv.NATS_SUBJECT_PREFIX);
      const left = await coordinationBuckets(sharedEnv.NATS_URL, sharedEnv.NATS_SUBJECT_PREFIX);
      if (left.length > 0) throw new Error(`the deployment's NATS buckets are still there after close: ${left.join(', ')}`);
    },
  };
}

/**
 * The JetStream streams behind a deployment's key-value buckets (`sandbox-leases`, `rate-limits`,
 * …): `KV_` + NATS_SUBJECT_PREFIX + `_` + the bucket (libs/coordination names them so).
 */
export async function coordinationBuckets(natsUrl: string, namespace: string): Promise<string[]> {
  const connection = await connectNats({ servers: natsUrl.split(',').map((s) => s.trim()) });
  try {
    const manager = await connection.jetstreamManager();
    const names: string[] = [];
    for await (const stream of manager.streams.list()) {
      if (stream.config.name.startsWith(`KV_${namespace}_`)) names.push(stream.config.name);
    }
    return names;
  } finally {
    await connection.close();
  }
}

/** A shared NATS server keeps a bucket until it is deleted: each run removes its own. */
export async function removeCoordinationBuckets(natsUrl: string, namespace: string): Promise<void> {
  const names = await coordinationBuckets(natsUrl, namespace);
  if (names.length === 0) return;
  const connection = await connectNats({ servers: natsUrl.split(',').map((s) => s.trim()) });
  try {
    const manager = await connection.jetstreamManager();
    for (const name of names) await manager.streams.delete(name);
  } finally {
    await connection.close();
  }
}

async function dropSchema(url: string, schema: string): Promise<void> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

async function eventRows(url: string, schema: string): Promise<PersistedItem[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query(
      `SELECT global_position, stream_id, type, data::text AS data, metadata::text AS metadata FROM "${schema}".events`,
    );
    return rows.map((r) => ({
      where: `event ${r.global_position} (${r.type})`,
      bytes: Buffer.from(`${r.stream_id} ${r.data} ${r.metadata}`),
    }));
  } finally {
    await client.end();
  }
}

async function bucketObjects(env: Record<string, string>): Promise<PersistedItem[]> {
  const objects = createObjectStore(objectStoreConfigFromEnv(env));
  try {
    const keys = await objects.list('', 10_000);
    return Promise.all(keys.map(async (key) => ({ where: `object ${key}`, bytes: await buffer(await objects.get(key)) })));
  } finally {
    await objects.close?.();
  }
}

/** Every workflow history of the deployment's task queues, payloads decoded to text. */
async function workflowHistories(env: Record<string, string>): Promise<PersistedItem[]> {
  const connection = await Connection.connect({ address: env.TEMPORAL_ADDRESS });
  try {
    const client = new TemporalClient({ connection, namespace: env.TEMPORAL_NAMESPACE || 'default' });
    const items: PersistedItem[] = [];
    // The agent turns' queue and the schedules' (libs/runner's createScheduleClock names it).
    const query = `TaskQueue="${env.TEMPORAL_TASK_QUEUE}" OR TaskQueue="${env.TEMPORAL_TASK_QUEUE}-schedules"`;
    for await (const workflow of client.workflow.list({ query })) {
      const history = await client.workflow.getHandle(workflow.workflowId, workflow.runId).fetchHistory();
      const text = JSON.stringify(history, (_, v) => (v instanceof Uint8Array ? Buffer.from(v).toString('utf8') : v));
      items.push({ where: `workflow history ${workflow.workflowId}/${workflow.runId}`, bytes: Buffer.from(text) });
    }
    return items;
  } finally {
    await connection.close();
  }
}

/**
 * A schedule's workflow outlives the processes (it is the schedule's durable timer): the
 * deployment's are ended when it closes, so a shared dev server does not keep waking them.
 */
async function endScheduleWorkflows(env: Record<string, string>): Promise<void> {
  const connection = await Connection.connect({ address: env.TEMPORAL_ADDRESS });
  try {
    const client = new TemporalClient({ connection, namespace: env.TEMPORAL_NAMESPACE || 'default' });
    const query = `TaskQueue="${env.TEMPORAL_TASK_QUEUE}-schedules" AND ExecutionStatus="Running"`;
    for await (const workflow of client.workflow.list({ query })) {
      await client.workflow
        .getHandle(workflow.workflowId)
        .terminate('the test deployment closed')
        .catch(() => undefined);
    }
  } finally {
    await connection.close();
  }
}

/**
 * Every message of the deployment's JetStream streams (the coordination buckets, named after its
 * NATS_SUBJECT_PREFIX); core NATS messages are never stored, so these are all NATS keeps.
 */
async function jetStreamMessages(natsUrl: string, run: string): Promise<PersistedItem[]> {
  const connection = await connectNats({ servers: natsUrl.split(',').map((s) => s.trim()) });
  try {
    const manager = await connection.jetstreamManager();
    const items: PersistedItem[] = [];
    for await (const stream of manager.streams.list()) {
      if (!stream.config.name.includes(run)) continue;
      items.push({ where: `jetstream stream ${stream.config.name} (config)`, bytes: Buffer.from(JSON.stringify(stream.config)) });
      const count = stream.state.messages;
      if (count === 0) continue;
      const consumer = await connection.jetstream().consumers.get(stream.config.name);
      const messages = await consumer.fetch({ max_messages: count, expires: 5_000 });
      let seen = 0;
      for await (const m of messages) {
        items.push({
          where: `jetstream ${stream.config.name} #${m.seq} ${m.subject}`,
          bytes: Buffer.concat([Buffer.from(`${m.subject} `), Buffer.from(m.data)]),
        });
        if (++seen >= count) break;
      }
    }
    return items;
  } finally {
    await connection.close();
  }
}
