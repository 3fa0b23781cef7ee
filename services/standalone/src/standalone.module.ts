import { DynamicModule, Module } from '@nestjs/common';
import { RuntimeModule } from '@app/runtime';
import { Tracing, TracingModule } from '@app/tracing';
import { ApiModule } from '../../api/src/api.module';
import { ArtifactsModule } from '../../artifacts/src/artifacts.module';
import { OrchestratorModule } from '../../orchestrator/src/orchestrator.module';
import { SandboxModule } from '../../sandbox/src/sandbox.module';

/**
 * All four services in one process over the embedded adapters: what `npm start` runs. The order of
 * the imports is the reverse of their destroy hooks' order: the orchestrator stops starting steps
 * before the sandbox lets its running calls finish (AgentRunnerService.onModuleDestroy). Tracing
 * comes first so that it stops last (TracingModule).
 */
@Module({})
export class StandaloneModule {
  static forRoot(env: NodeJS.ProcessEnv, tracing: Tracing): DynamicModule {
    return {
      module: StandaloneModule,
      imports: [
        TracingModule.forRoot(tracing),
        RuntimeModule.forRoot(env, { generateSecretsKey: true }),
        SandboxModule,
        ArtifactsModule,
        OrchestratorModule,
        ApiModule,
      ],
    };
  }
}
