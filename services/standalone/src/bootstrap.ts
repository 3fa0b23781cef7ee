import 'reflect-metadata';
import type { LogLevel } from '@nestjs/common';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { ApiConfig } from '../../api/src/api.config';
import { configureHttpApp, createFastifyAdapter } from '../../api/src/http-app';
import { SecretVault } from '@app/common';
import { ServiceLogger, leastSevereOf } from '@app/runtime';
import { startTracing } from '@app/tracing';
import { StandaloneModule } from './standalone.module';

export interface StartOptions {
  readonly env?: NodeJS.ProcessEnv;
  /** 0 picks a free port (tests). Default: PORT. */
  readonly port?: number;
  readonly host?: string;
  /** Overrides LOG_LEVEL: every level to print. */
  readonly logLevels?: LogLevel[];
}

/** Boots the all-in-one service and listens; resolves with the app and its base URL. */
export async function startStandalone(options: StartOptions = {}): Promise<{ app: NestFastifyApplication; url: string }> {
  const env = options.env ?? process.env;
  const config = new ApiConfig(env);
  const tracing = await startTracing('agentic-task-service', env);
  const logger = new ServiceLogger({ service: 'standalone', env, level: options.logLevels && leastSevereOf(options.logLevels) });
  const app = await NestFactory.create<NestFastifyApplication>(StandaloneModule.forRoot(env, tracing), createFastifyAdapter(config), {
    logger,
  });
  const vault = app.get(SecretVault);
  logger.redactTaskSecretsWith((taskId, text) => vault.redact(taskId, text));
  await configureHttpApp(app, config);
  await app.listen(options.port ?? config.port, options.host ?? env.HOST ?? '127.0.0.1');
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const url = `http://${options.host ?? env.HOST ?? '127.0.0.1'}:${port}`;
  new Logger('Standalone').log(
    `listening on ${url} (data in ${config.dataDir}); API docs at ${url}/api/docs, web console at ${url}/console`,
  );
  return { app, url };
}
