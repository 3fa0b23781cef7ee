import { dirname } from 'node:path';
import { writeFileAtomic } from '../workspace/atomic-write';
import { makeDirs } from '../workspace/make-dirs';
import { resolveInWorkspace } from '@app/common';
import { runTool } from './run-tool';
import { checkArgNames, requiredString } from './tool-args';
import type { ToolSpec } from './tool-spec';
import { ToolFailure } from './tool.errors';

export const WRITE_FILE_MAX_BYTES = 10 * 1024 * 1024;

export const writeFileTool: ToolSpec = {
  name: 'write_file',
  description: `Create or overwrite a UTF-8 text file of the workspace with the given content (at most ${WRITE_FILE_MAX_BYTES} bytes). Missing parent directories are created. Put output files for the user under downloads/.`,
  parameters: {
    type: 'object',
    properties: {
      path: { type: 'string', description: 'File path relative to the workspace root.' },
      content: { type: 'string', description: 'The whole new content of the file.' },
    },
    required: ['path', 'content'],
    additionalProperties: false,
  },
  execute: (args, ctx) =>
    runTool(args, ctx, async () => {
      checkArgNames(args, ['path', 'content']);
      const path = requiredString(args, 'path');
      const content = requiredString(args, 'content');
      // path.resolve drops a trailing slash, which would quietly turn "notes/" into a file named "notes".
      if (path.endsWith('/')) throw new ToolFailure(`${JSON.stringify(path)} ends with "/"; name a file, not a directory`);
      const bytes = Buffer.from(content, 'utf8');
      if (bytes.length > WRITE_FILE_MAX_BYTES) {
        throw new ToolFailure(
          `content is ${bytes.length} bytes, over the ${WRITE_FILE_MAX_BYTES}-byte limit of write_file; split it into several files`,
        );
      }
      const target = await resolveInWorkspace(ctx.workspaceRoot, path);
      await makeDirs(ctx.workspaceRoot, dirname(target), ctx.fileOwner).catch((error: NodeJS.ErrnoException) => {
        // Node reports a file standing where a parent directory should be as EEXIST or ENOTDIR.
        if (error.code !== 'EEXIST' && error.code !== 'ENOTDIR') throw error;
        throw new ToolFailure(`cannot create the parent directories of ${JSON.stringify(path)}: a part of the path is an existing file`);
      });
      await writeFileAtomic(target, bytes, ctx.signal, ctx.fileOwner);
      return `wrote ${bytes.length} bytes to ${path}`;
    }),
};
