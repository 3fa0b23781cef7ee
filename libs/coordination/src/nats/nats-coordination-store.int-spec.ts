import { connect } from 'nats';
import { assertNatsAnswers, natsUrlForTests } from '@app/bus/testing/nats-server';
import { describeCoordinationStoreContract } from '../testing/coordination.contract';
import { createNatsCoordinationStore } from './nats-coordination-store';

// Against the real NATS with JetStream the tests start (scripts/test.sh), in a namespace of this
// run; its buckets are removed afterwards so the shared server does not collect them.
const namespace = `ats-test-${process.pid}`;

beforeAll(async () => assertNatsAnswers(natsUrlForTests()));
afterAll(async () => {
  const connection = await connect({ servers: natsUrlForTests() });
  const manager = await connection.jetstreamManager();
  for await (const stream of manager.streams.list()) {
    if (stream.config.name.startsWith(`KV_${namespace}_`)) await manager.streams.delete(stream.config.name);
  }
  await connection.close();
});

describeCoordinationStoreContract('NATS JetStream KV', (options) =>
  createNatsCoordinationStore({ ...options, servers: [natsUrlForTests()], namespace }),
);
