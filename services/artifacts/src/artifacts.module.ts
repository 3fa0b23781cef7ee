import { Module } from '@nestjs/common';
import { ArtifactQueriesService } from './catalog/artifact-queries.service';

/** Artifacts: what the agent produced, listed and located (by object store key) from the task's events. */
@Module({
  providers: [ArtifactQueriesService],
})
export class ArtifactsModule {}
