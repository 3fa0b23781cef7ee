import type { INestApplicationContext } from '@nestjs/common';
import { Global, Injectable, Module, OnApplicationShutdown, OnModuleDestroy } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Readiness, ServiceMetrics } from '@app/metrics';
import { TracingModule } from '@app/tracing';
import { Scrape } from '../../../test/support/prometheus-scrape';
import { freePort } from '../../../test/support/service-process';
import { HealthServer } from './health-server';
import { HealthModule } from './health.module';
import { accepts, statusOf } from './testing/port-probes';

describe('HealthServer', () => {
  it("serves Node's process metrics on /metrics beside the service's, in a form a Prometheus parser reads", async () => {
    const port = await freePort();
    const health = await HealthServer.listen(port, '127.0.0.1');
    const metrics = new ServiceMetrics();
    const app = { get: (token: unknown) => (token === ServiceMetrics ? metrics : new Readiness()) };
    health.serve(app as unknown as INestApplicationContext);
    try {
      // Twice at once: the second finds no event loop delay sampled since the first.
      await Scrape.of(`http://127.0.0.1:${port}/metrics`);
      const scrape = await Scrape.of(`http://127.0.0.1:${port}/metrics`);
      expect(scrape.value('process_cpu_seconds_total', 'counter')).toBeGreaterThan(0);
      expect(scrape.value('nodejs_heap_size_used_bytes', 'gauge')).toBeGreaterThan(0);
      expect(scrape.value('ats_turns_started_total', 'counter')).toBe(0);
    } finally {
      await health.close();
    }
  });
});

describe('HealthModule', () => {
  it('keeps the health port answering through every hook of app.close(), tracing last, and closes it when close() resolves', async () => {
    const port = await freePort();
    const health = await HealthServer.listen(port, '127.0.0.1');
    const seen: string[] = [];
    const probe = (moment: string) => async () => void seen.push(`${moment}: ${await statusOf(port, '/healthz')}`);

    @Injectable()
    class FeatureProbe implements OnModuleDestroy, OnApplicationShutdown {
      onModuleDestroy = probe('feature destroyed');
      onApplicationShutdown = probe('feature shut down');
    }
    @Module({ providers: [FeatureProbe] })
    class FeatureModule {}
    @Global()
    @Module({ providers: [ServiceMetrics, Readiness], exports: [ServiceMetrics, Readiness] })
    class MetricsModule {}
    // As start-worker-service.ts imports them: HealthModule first, then tracing.
    @Module({
      imports: [
        HealthModule.forRoot(health),
        TracingModule.forRoot({ enabled: true, stop: probe('tracing stopped') }),
        MetricsModule,
        FeatureModule,
      ],
    })
    class RootModule {}

    const app = await NestFactory.createApplicationContext(RootModule, { logger: false });
    health.serve(app);
    try {
      expect(await statusOf(port, '/healthz')).toBe(200);
      await app.close();
      expect(seen).toEqual(['feature destroyed: 200', 'feature shut down: 200', 'tracing stopped: 200']);
      expect(await accepts(port)).toBe(false);
    } finally {
      await health.close();
    }
  });
});
