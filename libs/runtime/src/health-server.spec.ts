import type { INestApplicationContext } from '@nestjs/common';
import { Readiness, ServiceMetrics } from '@app/metrics';
import { Scrape } from '../../../test/support/prometheus-scrape';
import { freePort } from '../../../test/support/service-process';
import { HealthServer } from './health-server';

describe('HealthServer', () => {
  it("serves Node's process metrics on /metrics beside the service's, in a form a Prometheus parser reads", async () => {
    const port = await freePort();
    const health = await HealthServer.listen(port, '127.0.0.1');
    const metrics = new ServiceMetrics();
    const app = { get: (token: unknown) => (token === ServiceMetrics ? metrics : new Readiness()), close: async () => undefined };
    health.serve(app as unknown as INestApplicationContext);
    try {
      // Twice at once: the second finds no event loop delay sampled since the first.
      await Scrape.of(`http://127.0.0.1:${port}/metrics`);
      const scrape = await Scrape.of(`http://127.0.0.1:${port}/metrics`);
      expect(scrape.value('process_cpu_seconds_total', 'counter')).toBeGreaterThan(0);
      expect(scrape.value('nodejs_heap_size_used_bytes', 'gauge')).toBeGreaterThan(0);
      expect(scrape.value('ats_turns_started_total', 'counter')).toBe(0);
    } finally {
      health.close();
    }
  });
});
