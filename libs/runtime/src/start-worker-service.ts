import { DynamicModule, INestApplicationContext, Logger, LogLevel, Module, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { createServer } from 'node:http';
import { SecretVault, shutdownTimeoutMsFromEnv } from '@app/common';
import { Readiness, ServiceMetrics, readinessBody } from '@app/metrics';
import { startTracing, stopTracingOnClose } from '@app/tracing';
import { closeOnShutdownSignals } from './graceful-shutdown';
import { leastSevereOf } from './logging/log-level';
import { ServiceLogger } from './logging/service-logger';
import { RuntimeModule } from './runtime.module';

export interface WorkerServiceOptions {
  readonly env?: NodeJS.ProcessEnv;
  /** Overrides LOG_LEVEL: every level to print. */
  readonly logLevels?: LogLevel[];
}

/**
 * Boots one service that has no HTTP side (orchestrator, sandbox, artifacts) as its own process
 * for the distributed mode: the shared ports from configuration plus the service's module. It
 * talks to the others only over the bus and the stores. SIGTERM/SIGINT close it within
 * SHUTDOWN_TIMEOUT_MS: it stops taking work, lets what runs finish or hands it back, and exits 0.
 */
export async function startWorkerService(name: string, serviceModule: Type<unknown>, options: WorkerServiceOptions = {}) {
  const env = options.env ?? process.env;
  // Before the app: its providers (the Temporal worker) look for the running SDK as they start.
  const tracing = await startTracing(name, env);
  @Module({})
  class WorkerRootModule {
    static forRoot(): DynamicModule {
      return { module: WorkerRootModule, imports: [RuntimeModule.forRoot(env), serviceModule] };
    }
  }
  const shutdownTimeoutMs = shutdownTimeoutMsFromEnv(env);
  const logger = new ServiceLogger({ service: name, env, level: options.logLevels && leastSevereOf(options.logLevels) });
  const app = await NestFactory.createApplicationContext(WorkerRootModule.forRoot(), { logger });
  const vault = app.get(SecretVault);
  logger.redactTaskSecretsWith((taskId, text) => vault.redact(taskId, text));
  stopTracingOnClose(app, tracing);
  closeOnShutdownSignals(app, { name, timeoutMs: shutdownTimeoutMs });
  const port = Number(env.HEALTH_PORT ?? 0);
  if (port > 0) serveHealth(app, port, env.HOST ?? '127.0.0.1');
  new Logger(name).log(`${name} service running (bus: ${env.BUS ?? 'in-process'}, event store: ${env.EVENT_STORE ?? 'embedded'})`);
  return app;
}

/**
 * The operations endpoints on HEALTH_PORT, closed with the app: `GET /healthz` → 200
 * {"status":"ok"} (liveness), `GET /readyz` → 200 or 503 naming the dependency that is down,
 * `GET /metrics` → the Prometheus text exposition.
 */
function serveHealth(app: INestApplicationContext, port: number, host: string): void {
  const metrics = app.get(ServiceMetrics);
  const readiness = app.get(Readiness);
  const logger = new Logger('Health');
  const answer = async (url: string | undefined): Promise<{ status: number; type: string; body: string }> => {
    switch (url) {
      case '/healthz':
        return { status: 200, type: JSON_TYPE, body: '{"status":"ok"}' };
      case '/readyz': {
        const report = await readiness.report();
        for (const [name, reason] of Object.entries(report.reasons)) logger.warn(`not ready: ${name} is down: ${reason}`);
        return { status: report.ready ? 200 : 503, type: JSON_TYPE, body: JSON.stringify(readinessBody(report)) };
      }
      case '/metrics': {
        const { contentType, body } = await metrics.exposition();
        return { status: 200, type: contentType, body };
      }
      default:
        return { status: 404, type: JSON_TYPE, body: '{"status":"not found"}' };
    }
  };
  const server = createServer((req, res) => {
    const url = req.method === 'GET' || req.method === 'HEAD' ? req.url : undefined;
    answer(url).then(
      ({ status, type, body }) => res.writeHead(status, { 'content-type': type }).end(body),
      (error: unknown) => {
        logger.error(`${url ?? req.method}: ${error instanceof Error ? error.message : String(error)}`);
        res.writeHead(500, { 'content-type': JSON_TYPE }).end('{"status":"error"}');
      },
    );
  });
  server.listen(port, host);
  // Open while the service closes, so that /readyz can say 503 to the balancer meanwhile.
  const close = app.close.bind(app);
  app.close = async () => {
    await close();
    server.close();
    server.closeAllConnections();
  };
}

const JSON_TYPE = 'application/json';
