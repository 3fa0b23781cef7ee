import { DynamicModule, INestApplicationContext, Logger, LogLevel, Module, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { createServer } from 'node:http';
import { logLevelsFromEnv } from './log-levels';
import { RuntimeModule } from './runtime.module';

export interface WorkerServiceOptions {
  readonly env?: NodeJS.ProcessEnv;
  readonly logLevels?: LogLevel[];
}

/**
 * Boots one service that has no HTTP side (orchestrator, sandbox, artifacts) as its own process
 * for the distributed mode: the shared ports from configuration plus the service's module. It
 * talks to the others only over the bus and the stores; SIGTERM/SIGINT close it cleanly.
 */
export async function startWorkerService(name: string, serviceModule: Type<unknown>, options: WorkerServiceOptions = {}) {
  const env = options.env ?? process.env;
  @Module({})
  class WorkerRootModule {
    static forRoot(): DynamicModule {
      return { module: WorkerRootModule, imports: [RuntimeModule.forRoot(env), serviceModule] };
    }
  }
  const app = await NestFactory.createApplicationContext(WorkerRootModule.forRoot(), {
    logger: options.logLevels ?? logLevelsFromEnv(env),
  });
  app.enableShutdownHooks();
  const port = Number(env.HEALTH_PORT ?? 0);
  if (port > 0) serveHealth(app, port, env.HOST ?? '127.0.0.1');
  new Logger(name).log(`${name} service running (bus: ${env.BUS ?? 'in-process'}, event store: ${env.EVENT_STORE ?? 'embedded'})`);
  return app;
}

/** `GET /healthz` → 200 {"status":"ok"} for container health checks (HEALTH_PORT); closed with the app. */
function serveHealth(app: INestApplicationContext, port: number, host: string): void {
  const server = createServer((req, res) => {
    const ok = req.url === '/healthz';
    res.writeHead(ok ? 200 : 404, { 'content-type': 'application/json' }).end(ok ? '{"status":"ok"}' : '{"status":"not found"}');
  });
  server.listen(port, host);
  const close = app.close.bind(app);
  app.close = async () => {
    server.close();
    await close();
  };
}
