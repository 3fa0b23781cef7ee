import { Module } from '@nestjs/common';
import { WorkspaceLocator, dataDirFromEnv } from '@app/common';
import { RUNTIME_ENV } from '@app/runtime';
import { ToolExecutionService } from './tool-execution/tool-execution.service';

/** Sandbox control and tool execution: the only service that touches task workspaces. */
@Module({
  providers: [
    { provide: WorkspaceLocator, inject: [RUNTIME_ENV], useFactory: (env: NodeJS.ProcessEnv) => new WorkspaceLocator(dataDirFromEnv(env)) },
    ToolExecutionService,
  ],
  exports: [WorkspaceLocator],
})
export class SandboxModule {}
