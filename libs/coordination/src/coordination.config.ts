import { busConfigFromEnv } from '@app/bus';
import type { CoordinationStore, CoordinationStoreOptions } from './coordination.port';
import { InMemoryCoordinationStore } from './in-memory/in-memory-coordination-store';

/**
 * Where instances agree: with `BUS=nats` a JetStream bucket on the same NATS (every instance of
 * a distributed deployment reaches it), else this process's memory (the all-in-one mode).
 */
export async function createCoordinationStore(
  options: CoordinationStoreOptions,
  env: NodeJS.ProcessEnv = process.env,
): Promise<CoordinationStore> {
  const bus = busConfigFromEnv(env);
  if (bus.kind === 'in-process') return new InMemoryCoordinationStore(options);
  // Loaded only when chosen: the all-in-one mode never pays for the NATS client (BENCHMARKS.md, "Footprint").
  const { createNatsCoordinationStore } = await import('./nats/nats-coordination-store');
  return createNatsCoordinationStore({ ...options, servers: bus.servers, ...(bus.namespace ? { namespace: bus.namespace } : {}) });
}
