import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { copyFile, mkdir, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { ValidationError, WorkspaceLocator } from '@app/common';
import { ExecuteToolReply, ExecuteToolRequest, PrepareWorkspaceRequest, SUBJECTS } from '@app/contracts';
import { MESSAGE_BUS, MessageBus, Unsubscribe } from '@app/bus';
import { ToolDefinition } from '@app/model-provider';
import { createFileTools } from '../tools/file-tools';
import { ToolSpec } from '../tools/tool-spec';

/** Answers the orchestrator's tool requests and prepares workspaces from staged uploads. */
@Injectable()
export class ToolExecutionService implements OnModuleInit, OnModuleDestroy {
  private readonly tools = new Map<string, ToolSpec>(createFileTools().map((t) => [t.name, t]));
  private readonly unsubscribes: Unsubscribe[] = [];

  constructor(
    @Inject(MESSAGE_BUS) private readonly bus: MessageBus,
    private readonly workspaces: WorkspaceLocator,
  ) {}

  onModuleInit(): void {
    this.unsubscribes.push(
      this.bus.handle(SUBJECTS.sandboxListTools, async () => this.definitions()),
      this.bus.handle(SUBJECTS.sandboxExecuteTool, (req: ExecuteToolRequest) => this.execute(req)),
      this.bus.handle(SUBJECTS.sandboxPrepareWorkspace, (req: PrepareWorkspaceRequest) => this.prepare(req)),
    );
  }

  onModuleDestroy(): void {
    this.unsubscribes.forEach((u) => u());
  }

  definitions(): ToolDefinition[] {
    return [...this.tools.values()].map(({ name, description, parameters }) => ({ name, description, parameters }));
  }

  async execute(req: ExecuteToolRequest): Promise<ExecuteToolReply> {
    const startedAt = Date.now();
    const tool = this.tools.get(req.toolName);
    if (!tool) {
      const known = [...this.tools.keys()].join(', ');
      return { status: 'error', output: `Unknown tool "${req.toolName}". Available tools: ${known}.`, durationMs: 0 };
    }
    const workspaceRoot = await this.workspaces.ensure(req.taskId);
    const result = await tool.execute(req.args ?? {}, { workspaceRoot });
    return { ...result, durationMs: Date.now() - startedAt };
  }

  /** Moves staged uploads to the workspace root. (ZIP extraction arrives with the sandbox issue.) */
  async prepare(req: PrepareWorkspaceRequest): Promise<{ files: number }> {
    const root = await this.workspaces.ensure(req.taskId);
    for (const file of req.files) {
      const name = basename(file.name);
      if (name !== file.name || name === '' || name === '.' || name === '..') throw new ValidationError(`invalid upload file name "${file.name}"`);
      await mkdir(root, { recursive: true });
      await copyFile(file.stagedPath, join(root, name));
      await rm(file.stagedPath, { force: true });
    }
    return { files: req.files.length };
  }
}
