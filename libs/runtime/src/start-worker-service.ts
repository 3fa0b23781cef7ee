import { DynamicModule, Logger, LogLevel, Module, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { SecretVault, intFromEnv, shutdownTimeoutMsFromEnv } from '@app/common';
import { TracingModule, startTracing } from '@app/tracing';
import { closeOnShutdownSignals } from './graceful-shutdown';
import { HealthServer } from './health-server';
import { HealthModule } from './health.module';
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
  const healthPort = intFromEnv(env, 'HEALTH_PORT', 0, { max: 65_535 });
  const health = healthPort > 0 ? await HealthServer.listen(healthPort, env.HOST ?? '127.0.0.1') : undefined;
  // Before the app: its providers (the Temporal worker) look for the running SDK as they start.
  const tracing = await startTracing(name, env);
  @Module({})
  class WorkerRootModule {
    static forRoot(): DynamicModule {
      // HealthModule first, so the health server closes after every other shutdown hook (tracing's too).
      const first = health ? [HealthModule.forRoot(health)] : [];
      return { module: WorkerRootModule, imports: [...first, TracingModule.forRoot(tracing), RuntimeModule.forRoot(env), serviceModule] };
    }
  }
  const shutdownTimeoutMs = shutdownTimeoutMsFromEnv(env);
  const logger = new ServiceLogger({ service: name, env, level: options.logLevels && leastSevereOf(options.logLevels) });
  const app = await NestFactory.createApplicationContext(WorkerRootModule.forRoot(), { logger }).catch(async (error: unknown) => {
    await health?.close();
    throw error;
  });
  const vault = app.get(SecretVault);
  logger.redactTaskSecretsWith((taskId, text) => vault.redact(taskId, text));
  closeOnShutdownSignals(app, { name, timeoutMs: shutdownTimeoutMs });
  health?.serve(app);
  new Logger(name).log(`${name} service running (bus: ${env.BUS ?? 'in-process'}, event store: ${env.EVENT_STORE ?? 'embedded'})`);
  return app;
}
