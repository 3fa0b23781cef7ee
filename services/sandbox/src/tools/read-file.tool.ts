import { open, stat } from 'node:fs/promises';
import { resolveInWorkspace } from '@app/common';
import { runTool } from './run-tool';
import { checkArgNames, requiredString } from './tool-args';
import type { ToolSpec } from './tool-spec';
import { assertText } from './text-content';
import { ToolFailure } from './tool.errors';

export const READ_FILE_MAX_BYTES = 1024 * 1024;

export const readFileTool: ToolSpec = {
  name: 'read_file',
  readsOnly: true,
  description: `Read a UTF-8 text file of the workspace. Files over ${READ_FILE_MAX_BYTES} bytes are cut, with a marker saying so; binary files are refused.`,
  parameters: {
    type: 'object',
    properties: { path: { type: 'string', description: 'File path relative to the workspace root.' } },
    required: ['path'],
    additionalProperties: false,
  },
  execute: (args, ctx) =>
    runTool(args, ctx, async () => {
      checkArgNames(args, ['path']);
      const path = requiredString(args, 'path');
      ctx.signal?.throwIfAborted();
      const target = await resolveInWorkspace(ctx.workspaceRoot, path);
      // Checked before opening: opening a FIFO for reading would block until a writer appears.
      const info = await stat(target);
      if (info.isDirectory()) throw new ToolFailure(`${JSON.stringify(path)} is a directory; use list_files to see its contents`);
      if (!info.isFile()) throw new ToolFailure(`${JSON.stringify(path)} is not a regular file`);
      const bytes = await readPrefix(target, Math.min(info.size, READ_FILE_MAX_BYTES));
      assertText(bytes, path, info.size);
      if (info.size <= READ_FILE_MAX_BYTES) return new TextDecoder().decode(bytes);
      // Streaming mode holds back a multi-byte character cut in half by the bound instead of mangling it.
      const text = new TextDecoder().decode(bytes, { stream: true });
      return `${text}\n[truncated: file is ${info.size} bytes, showing first ${READ_FILE_MAX_BYTES}]`;
    }),
};

async function readPrefix(path: string, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  const handle = await open(path, 'r');
  try {
    let filled = 0;
    while (filled < length) {
      const { bytesRead } = await handle.read(buffer, filled, length - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return buffer.subarray(0, filled);
  } finally {
    await handle.close();
  }
}
