import { Global, Injectable, Module, OnApplicationShutdown } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Tracing } from './start-tracing';
import { TracingModule } from './tracing.module';

const calls: string[] = [];

@Injectable()
class Recorder implements OnApplicationShutdown {
  constructor(private readonly name: string) {}
  onApplicationShutdown(): void {
    calls.push(this.name);
  }
}

@Global()
@Module({ providers: [{ provide: 'global', useFactory: () => new Recorder('global module') }] })
class SomeGlobalModule {}

@Module({ providers: [{ provide: 'feature', useFactory: () => new Recorder('feature module') }] })
class FeatureModule {}

const tracing: Tracing = {
  enabled: true,
  stop: async () => {
    calls.push('tracing stopped');
  },
};

@Module({
  imports: [TracingModule.forRoot(tracing), SomeGlobalModule, FeatureModule],
  providers: [{ provide: 'root', useFactory: () => new Recorder('root module') }],
})
class RootModule {}

describe('TracingModule', () => {
  it('stops tracing once, after every other shutdown hook of the app, global modules included', async () => {
    const app = await NestFactory.createApplicationContext(RootModule, { logger: false });
    await app.close();
    expect(calls).toEqual(['root module', 'feature module', 'global module', 'tracing stopped']);
  });
});
