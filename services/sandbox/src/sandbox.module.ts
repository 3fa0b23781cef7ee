import { Module } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { CheckpointReader, checkpointSettingsFromEnv } from '@app/checkpoints';
import { TaskSecrets, dataDirFromEnv } from '@app/common';
import { createCoordinationStore } from '@app/coordination';
import { EVENT_STORE, EventStore } from '@app/event-store';
import { SANDBOX_LEASES_BUCKET } from '@app/contracts';
import { OBJECT_STORE, ObjectStore } from '@app/object-store';
import { ServiceMetrics } from '@app/metrics';
import { ObjectStoreReadiness, RUNTIME_ENV } from '@app/runtime';
import { TaskCommandExecutor } from '@app/task-commands';
import { ArtifactScanner, DEFAULT_SCAN_LIMITS } from './artifacts/artifact-scanner';
import { TaskCheckpoints } from './workspace/checkpoints/task-checkpoints';
import { WorkspaceMarks } from './workspace/checkpoints/workspace-marks';
import { CheckpointCollector } from './workspace/checkpoints/checkpoint-collector';
import { CHANGE_HINTS, ChangeHints } from './workspace/checkpoints/change-hints';
import { changeHintsForThisHost } from './workspace/checkpoints/fanotify-hints';
import { SANDBOX_SETTINGS, SandboxSettings, sandboxSettingsFromEnv } from './config/sandbox-settings';
import { createSandboxProvider } from './provider/create-sandbox-provider';
import { SANDBOX_PROVIDER, SandboxProvider } from './provider/sandbox-provider.port';
import { SandboxLeases } from './sessions/sandbox-leases';
import { SandboxSessions } from './sessions/sandbox-sessions';
import { TaskPlacement } from './sessions/task-placement';
import { UploadFetcher } from './uploads/upload-fetcher';
import { ToolExecutionService } from './tool-execution/tool-execution.service';
import { AgentToolbox } from './tools/agent-toolbox';
import { createAgentToolbox } from './tools/create-agent-toolbox';

/**
 * Masks a task's secrets in text from its workspace (names the snapshot skips). A workspace left
 * from before a restart may be snapshotted before any call opened its secrets here: they are
 * opened from the task as just loaded for the snapshot.
 */
function redactOpening(secrets: TaskSecrets, commands: TaskCommandExecutor, taskId: string, text: string): string {
  const state = commands.cached(taskId)?.state;
  return secrets.redact(taskId, text, state?.exists ? state : undefined);
}

/** Sandbox control and tool execution: the only service that touches task workspaces. */
@Module({
  providers: [
    { provide: SANDBOX_SETTINGS, inject: [RUNTIME_ENV], useFactory: (env: NodeJS.ProcessEnv) => sandboxSettingsFromEnv(env) },
    // The checkpoints' change detector: the provider watches each task's image while mounted, the checkpoints drain it.
    { provide: CHANGE_HINTS, useFactory: () => changeHintsForThisHost() },
    {
      provide: SANDBOX_PROVIDER,
      inject: [RUNTIME_ENV, SANDBOX_SETTINGS, CHANGE_HINTS],
      useFactory: (env: NodeJS.ProcessEnv, settings: SandboxSettings, hints: ChangeHints) =>
        createSandboxProvider(settings.provider, dataDirFromEnv(env), hints),
    },
    {
      provide: SandboxLeases,
      inject: [RUNTIME_ENV, SANDBOX_SETTINGS],
      useFactory: async (env: NodeJS.ProcessEnv, settings: SandboxSettings) =>
        new SandboxLeases(
          await createCoordinationStore({ bucket: SANDBOX_LEASES_BUCKET }, env),
          `sbx${randomBytes(6).toString('hex')}`,
          settings.leaseTtlMs,
        ),
    },
    { provide: TaskPlacement, inject: [SandboxLeases], useFactory: (leases: SandboxLeases) => new TaskPlacement(leases) },
    {
      provide: SandboxSessions,
      inject: [
        RUNTIME_ENV,
        SANDBOX_SETTINGS,
        SANDBOX_PROVIDER,
        OBJECT_STORE,
        TaskCommandExecutor,
        TaskSecrets,
        SandboxLeases,
        ServiceMetrics,
        TaskCheckpoints,
      ],
      useFactory: (
        env: NodeJS.ProcessEnv,
        settings: SandboxSettings,
        provider: SandboxProvider,
        objects: ObjectStore,
        commands: TaskCommandExecutor,
        secrets: TaskSecrets,
        leases: SandboxLeases,
        metrics: ServiceMetrics,
        checkpoints: TaskCheckpoints,
      ) => {
        const sessions = new SandboxSessions(
          provider,
          objects,
          commands,
          join(dataDirFromEnv(env), 'workspaces'),
          settings.sessions,
          (taskId, text) => redactOpening(secrets, commands, taskId, text),
          leases,
          checkpoints,
        );
        metrics.countSandboxesWith(() => sessions.liveCount);
        return sessions;
      },
    },
    {
      provide: TaskCheckpoints,
      inject: [OBJECT_STORE, SANDBOX_SETTINGS, CHANGE_HINTS, RUNTIME_ENV],
      useFactory: (objects: ObjectStore, settings: SandboxSettings, hints: ChangeHints, env: NodeJS.ProcessEnv) =>
        new TaskCheckpoints(
          objects,
          new CheckpointReader(objects),
          settings.sessions.snapshotMaxBytes,
          hints,
          // Beside the workspaces (a shared volume holds both), in a folder no task id names.
          new WorkspaceMarks(join(dataDirFromEnv(env), 'workspaces', '.checkpoint-marks')),
        ),
    },
    {
      provide: CheckpointCollector,
      inject: [OBJECT_STORE, EVENT_STORE, TaskCommandExecutor, RUNTIME_ENV],
      useFactory: (objects: ObjectStore, store: EventStore, commands: TaskCommandExecutor, env: NodeJS.ProcessEnv) =>
        new CheckpointCollector({ objects, reader: new CheckpointReader(objects), store }, commands, checkpointSettingsFromEnv(env)),
    },
    {
      provide: ArtifactScanner,
      inject: [OBJECT_STORE, SANDBOX_SETTINGS],
      useFactory: (objects: ObjectStore, settings: SandboxSettings) =>
        new ArtifactScanner(objects, { ...DEFAULT_SCAN_LIMITS, maxStoredBytes: settings.provider.limits.diskQuotaBytes }),
    },
    {
      provide: UploadFetcher,
      inject: [RUNTIME_ENV, SANDBOX_SETTINGS, OBJECT_STORE],
      useFactory: (env: NodeJS.ProcessEnv, settings: SandboxSettings, objects: ObjectStore) =>
        new UploadFetcher(objects, join(dataDirFromEnv(env), 'sandbox-uploads'), settings.uploads),
    },
    {
      provide: AgentToolbox,
      inject: [SANDBOX_SETTINGS, RUNTIME_ENV],
      useFactory: (settings: SandboxSettings, env: NodeJS.ProcessEnv) => createAgentToolbox(settings, dataDirFromEnv(env)),
    },
    ToolExecutionService,
    ObjectStoreReadiness,
  ],
})
export class SandboxModule {}
