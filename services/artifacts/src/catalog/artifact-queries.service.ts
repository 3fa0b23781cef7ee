import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { ListArtifactsReply, ListArtifactsRequest, LocateArtifactReply, LocateArtifactRequest, SUBJECTS } from '@app/contracts';
import { MESSAGE_BUS, MessageBus, Unsubscribe } from '@app/bus';
import { TaskViewsStore } from '@app/read-models';
import { ArtifactCatalog } from './artifact-catalog';

/** Answers artifact queries on the bus. */
@Injectable()
export class ArtifactQueriesService implements OnModuleInit, OnModuleDestroy {
  private readonly catalog: ArtifactCatalog;
  private unsubscribes: Unsubscribe[] = [];

  constructor(
    @Inject(MESSAGE_BUS) private readonly bus: MessageBus,
    views: TaskViewsStore,
  ) {
    this.catalog = new ArtifactCatalog(views);
  }

  onModuleInit(): void {
    this.unsubscribes = [
      this.bus.handle(SUBJECTS.artifactsList, async (req: ListArtifactsRequest): Promise<ListArtifactsReply> => ({
        files: this.catalog.list(req.taskId),
      })),
      this.bus.handle(SUBJECTS.artifactsLocate, async (req: LocateArtifactRequest): Promise<LocateArtifactReply> =>
        this.catalog.locate(req.taskId, req.path),
      ),
    ];
  }

  onModuleDestroy(): void {
    this.unsubscribes.forEach((u) => u());
  }
}
