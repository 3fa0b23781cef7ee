import { coordinationBuckets, startDistributedDeployment } from '../support/distributed-deployment';

// The tests share one NATS server, which keeps a JetStream key-value bucket until someone deletes
// it: a deployment's close removes the buckets its run made (here the sandbox's `sandbox-leases`).

jest.setTimeout(120_000);

describe('A distributed deployment on the shared NATS', () => {
  it('leaves none of its coordination buckets behind once closed', async () => {
    const d = await startDistributedDeployment({ api: 0, orchestrator: 0, sandbox: 1, artifacts: 0 }, {});
    const { NATS_URL, NATS_SUBJECT_PREFIX } = d.sharedEnv;
    try {
      expect(await coordinationBuckets(NATS_URL, NATS_SUBJECT_PREFIX)).toEqual([`KV_${NATS_SUBJECT_PREFIX}_sandbox-leases`]);
    } finally {
      await d.close();
    }
    expect(await coordinationBuckets(NATS_URL, NATS_SUBJECT_PREFIX)).toEqual([]);
  });
});
