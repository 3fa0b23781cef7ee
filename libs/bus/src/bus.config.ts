import type { MessageBus } from './bus.port';
import { InProcessBus } from './in-process/in-process-bus';
import { BUS_NAMESPACE, NamespacedBus } from './namespaced-bus';

export type BusConfig =
  { readonly kind: 'in-process' } | { readonly kind: 'nats'; readonly servers: readonly string[]; readonly namespace?: string };

export const DEFAULT_NATS_URL = 'nats://127.0.0.1:4222';

/**
 * `BUS=in-process` (default): one process, nothing external. `BUS=nats`: NATS at `NATS_URL`
 * (comma-separated for a cluster; default nats://127.0.0.1:4222). Anything else fails, rather
 * than silently keeping messages inside a process that other services cannot reach.
 * `NATS_SUBJECT_PREFIX` puts every subject under `<prefix>.` (deployments sharing one NATS).
 */
export function busConfigFromEnv(env: NodeJS.ProcessEnv): BusConfig {
  const kind = env.BUS?.trim() || 'in-process';
  if (kind === 'in-process') return { kind };
  if (kind !== 'nats') throw new Error(`BUS must be "in-process" or "nats", got "${kind}"`);
  const servers = (env.NATS_URL?.trim() || DEFAULT_NATS_URL)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (servers.length === 0) throw new Error('NATS_URL names no server');
  const namespace = env.NATS_SUBJECT_PREFIX?.trim();
  if (!namespace) return { kind, servers };
  if (!BUS_NAMESPACE.test(namespace))
    throw new Error(`NATS_SUBJECT_PREFIX must be dotted words of letters, digits, _ and -, got "${namespace}"`);
  return { kind, servers, namespace };
}

export async function createBus(config: BusConfig): Promise<MessageBus> {
  if (config.kind === 'in-process') return new InProcessBus();
  // Loaded only when chosen: NATS and Nest's microservices package would cost every all-in-one
  // start a few hundred ms of CPU for a bus it never uses (BENCHMARKS.md, "Footprint").
  const { createNatsBus } = await import('./nats/nats-bus');
  const bus = await createNatsBus({ servers: config.servers });
  return config.namespace ? new NamespacedBus(bus, config.namespace) : bus;
}

export function createBusFromConfig(env: NodeJS.ProcessEnv = process.env): Promise<MessageBus> {
  return createBus(busConfigFromEnv(env));
}
