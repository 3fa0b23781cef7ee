import { DynamicModule, Global, Inject, Injectable, Module, OnApplicationShutdown } from '@nestjs/common';
import { HealthServer } from './health-server';

const HEALTH_SERVER = Symbol('HealthServer');

/** Closes the health server in the last shutdown hook Nest runs: the app has closed by then. */
@Injectable()
class HealthServerShutdown implements OnApplicationShutdown {
  constructor(@Inject(HEALTH_SERVER) private readonly health: HealthServer) {}

  async onApplicationShutdown(): Promise<void> {
    await this.health.close();
  }
}

/**
 * Keeps a worker's HEALTH_PORT answering while its app closes (so /readyz says 503 to the
 * balancer until the end: graceful-shutdown.ts marks it not ready), then closes it. Import it
 * first in the worker's root module, before TracingModule: Nest runs onApplicationShutdown module
 * by module from the root down, then the global modules, the one registered first last (see
 * libs/tracing/src/tracing.module.ts), so this hook runs after all of the app's, tracing's included.
 */
@Global()
@Module({})
export class HealthModule {
  static forRoot(health: HealthServer): DynamicModule {
    return { module: HealthModule, providers: [{ provide: HEALTH_SERVER, useValue: health }, HealthServerShutdown] };
  }
}
