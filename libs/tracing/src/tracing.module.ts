import { DynamicModule, Global, Inject, Injectable, Module, OnApplicationShutdown } from '@nestjs/common';
import type { Tracing } from './start-tracing';

const TRACING = Symbol('Tracing');

/** Stops the process's tracing in the last shutdown hook Nest runs. */
@Injectable()
class TracingShutdown implements OnApplicationShutdown {
  constructor(@Inject(TRACING) private readonly tracing: Tracing) {}

  async onApplicationShutdown(): Promise<void> {
    await this.tracing.stop();
  }
}

/**
 * Exports the spans still batched (and those the other shutdown hooks make) when the app closes,
 * by app.close() or a signal. Import it first in a service's root module: Nest runs
 * onApplicationShutdown module by module from the root down, then the global modules, the one
 * registered first last; being the root's first import, this global module is registered before
 * every other but Nest's own, so its hook runs after all of the service's. (A worker imports only
 * its HealthModule before it, libs/runtime/src/health.module.ts, to close its health port last.)
 */
@Global()
@Module({})
export class TracingModule {
  static forRoot(tracing: Tracing): DynamicModule {
    return { module: TracingModule, providers: [{ provide: TRACING, useValue: tracing }, TracingShutdown] };
  }
}
