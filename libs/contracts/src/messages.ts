// Payloads of the inter-service messages (wire schema: proto/agent/v1/messages.proto).

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
}

/** An upload the API has staged; the bus carries references, never the bytes. */
export interface StagedUpload {
  readonly name: string;
  /** Location in the staging area (all-in-one mode: a path under DATA_DIR/uploads). */
  readonly stagedPath: string;
}

export interface PrepareWorkspaceRequest {
  readonly taskId: string;
  readonly files: readonly StagedUpload[];
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

/** Where the API can stream an artifact from (all-in-one mode: a local file). */
export interface LocateArtifactReply {
  readonly file: ArtifactFile;
  readonly localPath: string;
}
