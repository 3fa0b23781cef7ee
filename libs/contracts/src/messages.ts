// Payloads of the inter-service messages (wire schema: proto/agent/v1/messages.proto).
import type { ArtifactRecord, CheckpointRef, EgressRecord, WorkspaceChange } from '@app/task-domain';

/**
 * sandbox.query.list_tools: the tools a task's model may call (its MCP servers' included).
 * No message carries a task's secrets: the sandbox opens them from the task's events with its key.
 */
export interface ListToolsRequest {
  readonly taskId: string;
}

export interface ExecuteToolRequest {
  readonly taskId: string;
  readonly callId: string;
  readonly toolName: string;
  readonly args: Record<string, unknown>;
  readonly timeoutMs?: number;
}

export interface ExecuteToolReply {
  readonly status: 'success' | 'error';
  readonly output: string;
  readonly exitCode?: number;
  readonly durationMs: number;
  /** Every file under `downloads/` after the call, its bytes already in the object store (absent: not scanned). */
  readonly artifacts?: readonly ArtifactManifestEntry[];
  /** Symlinks under `downloads/` leading out of the workspace (with `artifacts`). */
  readonly escapingLinks?: readonly string[];
  /** Every connection the task's egress proxy handled during the call (SANDBOX_NETWORK=egress), in the order they ended. */
  readonly egress?: readonly EgressRecord[];
  /** What the call changed in the workspace, and the checkpoint taken after it (docs/api.md "Time travel"). */
  readonly changes?: readonly WorkspaceChange[];
  readonly changesTruncated?: true;
  readonly checkpoint?: CheckpointRef;
  readonly checkpointSkipped?: string;
}

export type { EgressRecord } from '@app/task-domain';

/** Published when a task is cancelled during a tool call; the instance running it kills its processes. */
export interface ToolCancelledNotice {
  readonly taskId: string;
  readonly callId: string;
}

/**
 * Published after each append to the event store: the store named `store` now holds every event
 * up to `position`. A notification only: receivers read the events from the store.
 */
export interface EventsAppendedNotice {
  /** Which store grew (several deployments may share one NATS): e.g. `postgres:<schema>`. */
  readonly store: string;
  readonly position: number;
}

/** One file under `downloads/`: the task domain's artifact record, bytes already in the object store. */
export type ArtifactManifestEntry = ArtifactRecord;

/** An upload the API put into the object store; the bus carries references, never the bytes. */
export interface UploadRef {
  /** The file name as uploaded (a bare name; the sandbox checks it). */
  readonly name: string;
  readonly objectKey: string;
  readonly size: number;
}

export interface PrepareWorkspaceRequest {
  readonly taskId: string;
  readonly files: readonly UploadRef[];
}

export interface PrepareWorkspaceReply {
  readonly files: number;
  /** The workspace with the uploads placed, recorded with the task (absent: not taken). */
  readonly checkpoint?: CheckpointRef;
}

export interface ArtifactFile {
  readonly name: string;
  readonly path: string;
  readonly size: number;
  readonly category: string;
  readonly mimeType: string;
  readonly modifiedAt: string;
}

export interface ListArtifactsRequest {
  readonly taskId: string;
}

export interface ListArtifactsReply {
  readonly files: readonly ArtifactFile[];
}

export interface LocateArtifactRequest {
  readonly taskId: string;
  readonly path: string;
}

/** Where the API streams an artifact from: its object store key (bytes never travel on the bus). */
export interface LocateArtifactReply {
  readonly file: ArtifactFile;
  readonly objectKey: string;
}
