import 'reflect-metadata';
import { DynamicModule, Logger, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { SecretVault, shutdownTimeoutMsFromEnv } from '@app/common';
import { RuntimeModule, ServiceLogger, closeOnShutdownSignals } from '@app/runtime';
import { Tracing, TracingModule, startTracing } from '@app/tracing';
import { ApiConfig } from './api.config';
import { ApiModule } from './api.module';
import { configureHttpApp, createFastifyAdapter } from './http-app';

// The API service as its own process (distributed mode): `npm run start:api`. Any number of
// instances can run behind a load balancer; each streams any task (the event store is the truth).

@Module({})
class ApiRootModule {
  static forRoot(env: NodeJS.ProcessEnv, tracing: Tracing): DynamicModule {
    return { module: ApiRootModule, imports: [TracingModule.forRoot(tracing), RuntimeModule.forRoot(env), ApiModule] };
  }
}

async function main(): Promise<void> {
  const env = process.env;
  const config = new ApiConfig(env);
  const tracing = await startTracing('api', env);
  const shutdownTimeoutMs = shutdownTimeoutMsFromEnv(env);
  const logger = new ServiceLogger({ service: 'api', env });
  const app = await NestFactory.create<NestFastifyApplication>(ApiRootModule.forRoot(env, tracing), createFastifyAdapter(config), {
    logger,
  });
  const vault = app.get(SecretVault);
  logger.redactTaskSecretsWith((taskId, text) => vault.redact(taskId, text));
  await configureHttpApp(app, config);
  closeOnShutdownSignals(app, { name: 'Api', timeoutMs: shutdownTimeoutMs, closeFirst: () => app.getHttpAdapter().close() });
  const host = env.HOST ?? '127.0.0.1';
  await app.listen(config.port, host);
  new Logger('Api').log(`api service listening on http://${host}:${config.port}`);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
