import { Module } from '@nestjs/common';
import { SecretVault, dataDirFromEnv } from '@app/common';
import { OBJECT_STORE, ObjectStore } from '@app/object-store';
import { RUNTIME_ENV } from '@app/runtime';
import { TaskCommandExecutor } from '@app/task-commands';
import { join } from 'node:path';
import { ArtifactScanner } from './artifacts/artifact-scanner';
import { SANDBOX_SETTINGS, SandboxSettings, sandboxSettingsFromEnv } from './config/sandbox-settings';
import { createSandboxProvider } from './provider/create-sandbox-provider';
import { SANDBOX_PROVIDER, SandboxProvider } from './provider/sandbox-provider.port';
import { SandboxSessions } from './sessions/sandbox-sessions';
import { UploadFetcher } from './uploads/upload-fetcher';
import { ToolExecutionService } from './tool-execution/tool-execution.service';
import { AgentToolbox } from './tools/agent-toolbox';
import { createAgentToolbox } from './tools/create-agent-toolbox';

/** Sandbox control and tool execution: the only service that touches task workspaces. */
@Module({
  providers: [
    { provide: SANDBOX_SETTINGS, inject: [RUNTIME_ENV], useFactory: (env: NodeJS.ProcessEnv) => sandboxSettingsFromEnv(env) },
    {
      provide: SANDBOX_PROVIDER,
      inject: [RUNTIME_ENV, SANDBOX_SETTINGS],
      useFactory: (env: NodeJS.ProcessEnv, settings: SandboxSettings) => createSandboxProvider(settings.provider, dataDirFromEnv(env)),
    },
    {
      provide: SandboxSessions,
      inject: [RUNTIME_ENV, SANDBOX_SETTINGS, SANDBOX_PROVIDER, OBJECT_STORE, TaskCommandExecutor, SecretVault],
      useFactory: (env: NodeJS.ProcessEnv, settings: SandboxSettings, provider: SandboxProvider, objects: ObjectStore, commands: TaskCommandExecutor, vault: SecretVault) =>
        new SandboxSessions(provider, objects, commands, join(dataDirFromEnv(env), 'workspaces'), settings.sessions, (taskId, text) => vault.redact(taskId, text)),
    },
    { provide: ArtifactScanner, inject: [OBJECT_STORE], useFactory: (objects: ObjectStore) => new ArtifactScanner(objects) },
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
  ],
})
export class SandboxModule {}
