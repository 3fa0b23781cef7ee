import type { INestApplicationContext } from '@nestjs/common';
import { Injectable, Module, OnApplicationShutdown } from '@nestjs/common';
import { trace } from '@opentelemetry/api';
import { mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../../test/support/service-process';
import { shutdownHandler } from './graceful-shutdown';
import { startWorkerService } from './start-worker-service';
import { accepts, statusOf } from './testing/port-probes';

let healthPort = 0;
const seenWhileClosing: Record<string, number | string | boolean> = {};

/**
 * A service whose shutdown hook asks the health port what it answers while the app closes, and
 * leaves a span for tracing's stop (the last hook of the worker's own) to export.
 */
@Injectable()
class ClosingProbe implements OnApplicationShutdown {
  async onApplicationShutdown(): Promise<void> {
    seenWhileClosing.readyz = await statusOf(healthPort, '/readyz');
    seenWhileClosing.healthz = await statusOf(healthPort, '/healthz');
    trace.getTracer('probe').startSpan('closing').end();
  }
}
@Module({ providers: [ClosingProbe] })
class ProbeServiceModule {}

describe('startWorkerService', () => {
  let dataDir: string;
  let collector: Server;
  let collectorPort: number;
  let listenersBefore: Set<unknown>;

  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'worker-service-'));
    healthPort = await freePort();
    listenersBefore = new Set([...process.listeners('SIGTERM'), ...process.listeners('SIGINT')]);
    // An OTLP collector: the span export that tracing's stop makes looks at the health port meanwhile.
    collector = createServer((req, res) => {
      req.resume();
      void accepts(healthPort).then((open) => {
        seenWhileClosing.healthPortWhileTracingStopped = open;
        res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      });
    });
    collectorPort = await new Promise<number>((resolve) =>
      collector.listen(0, '127.0.0.1', () => resolve((collector.address() as { port: number }).port)),
    );
  });

  afterEach(async () => {
    // closeOnShutdownSignals' handlers: this process is jest's, not the worker's.
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      for (const listener of process.listeners(signal)) if (!listenersBefore.has(listener)) process.off(signal, listener);
    }
    await new Promise((resolve) => collector.close(resolve));
    await rm(dataDir, { recursive: true, force: true });
  });

  it('answers /readyz 503 on HEALTH_PORT while the app closes on a signal, and closes that port only once the app has closed', async () => {
    const env = {
      DATA_DIR: dataDir,
      HEALTH_PORT: String(healthPort),
      HOST: '127.0.0.1',
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${collectorPort}`,
    };
    const app: INestApplicationContext = await startWorkerService('probe', ProbeServiceModule, { env, logLevels: ['fatal'] });
    expect(await statusOf(healthPort, '/readyz')).toBe(200);

    const exited = new Promise<number>((resolve) => shutdownHandler(app, { name: 'probe', timeoutMs: 10_000, exit: resolve })('SIGTERM'));
    expect(await exited).toBe(0);

    // Open through the app's shutdown hooks (saying "not ready"), tracing's last one included; closed once close() has finished.
    expect(seenWhileClosing).toEqual({ readyz: 503, healthz: 200, healthPortWhileTracingStopped: true });
    expect(await accepts(healthPort)).toBe(false);
  });
});
