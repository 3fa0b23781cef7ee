import { Module } from '@nestjs/common';
import { WorkspaceLocator, dataDirFromEnv } from '@app/common';
import { RUNTIME_ENV } from '@app/runtime';
import { ArtifactQueriesService } from './catalog/artifact-queries.service';

/** Artifacts: what the agent produced, listed and located for download. */
@Module({
  providers: [
    { provide: WorkspaceLocator, inject: [RUNTIME_ENV], useFactory: (env: NodeJS.ProcessEnv) => new WorkspaceLocator(dataDirFromEnv(env)) },
    ArtifactQueriesService,
  ],
})
export class ArtifactsModule {}
