import { readFile, stat } from 'node:fs/promises';
import { writeFileAtomic } from '../workspace/atomic-write';
import { resolveInWorkspace } from '@app/common';
import { runTool } from './run-tool';
import { checkArgNames, requiredString } from './tool-args';
import type { ToolSpec } from './tool-spec';
import { assertText } from './text-content';
import { ToolFailure } from './tool.errors';
import { WRITE_FILE_MAX_BYTES } from './write-file.tool';

export const editFileTool: ToolSpec = {
  name: 'edit_file',
  description:
    'Replace one exact occurrence of oldText with newText in a UTF-8 text file of the workspace. oldText must occur exactly once: include enough surrounding lines to make it unique.',
  parameters: {
    type: 'object',
    properties: {
      path: { type: 'string', description: 'File path relative to the workspace root.' },
      oldText: { type: 'string', description: 'Exact text to replace, whitespace and line breaks included; must occur exactly once.' },
      newText: { type: 'string', description: 'Replacement text (empty to delete oldText).' },
    },
    required: ['path', 'oldText', 'newText'],
    additionalProperties: false,
  },
  execute: (args, ctx) =>
    runTool(args, ctx, async () => {
      checkArgNames(args, ['path', 'oldText', 'newText']);
      const path = requiredString(args, 'path');
      const oldText = requiredString(args, 'oldText');
      const newText = requiredString(args, 'newText');
      const quoted = JSON.stringify(path);
      if (oldText === '') throw new ToolFailure('oldText is empty; give the exact text to replace');
      if (oldText === newText) throw new ToolFailure('oldText and newText are identical; nothing would change');
      const target = await resolveInWorkspace(ctx.workspaceRoot, path);
      const text = await readText(target, path);
      const at = findOnlyOccurrence(text, oldText, quoted);
      // Spliced by index, not String.replace, whose `$&`/`$1` patterns would rewrite newText.
      const edited = text.slice(0, at) + newText + text.slice(at + oldText.length);
      const bytes = Buffer.from(edited, 'utf8');
      if (bytes.length > WRITE_FILE_MAX_BYTES)
        throw new ToolFailure(`the edited file would be ${bytes.length} bytes, over the ${WRITE_FILE_MAX_BYTES}-byte limit`);
      await writeFileAtomic(target, bytes, ctx.signal, ctx.fileOwner);
      return `edited ${path}: replaced 1 occurrence at line ${lineOf(text, at)}; the file is now ${bytes.length} bytes`;
    }),
};

async function readText(target: string, path: string): Promise<string> {
  // Checked before reading: a huge file is not loaded, and a FIFO would block the read.
  const info = await stat(target);
  if (info.isDirectory()) throw new ToolFailure(`${JSON.stringify(path)} is a directory, not a file`);
  if (!info.isFile()) throw new ToolFailure(`${JSON.stringify(path)} is not a regular file`);
  if (info.size > WRITE_FILE_MAX_BYTES)
    throw new ToolFailure(`${JSON.stringify(path)} is ${info.size} bytes, too large to edit (limit ${WRITE_FILE_MAX_BYTES})`);
  const bytes = await readFile(target);
  assertText(bytes, path, bytes.length);
  try {
    // fatal: rewriting invalid UTF-8 would silently replace those bytes with U+FFFD.
    // ignoreBOM: keeps a byte-order mark in the text so that it is written back.
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw new ToolFailure(`${JSON.stringify(path)} is not valid UTF-8 text; edit_file only edits UTF-8 files`);
  }
}

function findOnlyOccurrence(text: string, oldText: string, quoted: string): number {
  const first = text.indexOf(oldText);
  if (first === -1) {
    const hint = text.includes('\r\n') && !oldText.includes('\r\n') && oldText.includes('\n') ? ' (the file has CRLF line endings)' : '';
    throw new ToolFailure(`oldText was not found in ${quoted}${hint}; read_file shows its exact content`);
  }
  // Overlapping matches count too: "aa" in "aaa" is ambiguous even though replace() would take the first.
  let count = 1;
  for (let i = text.indexOf(oldText, first + 1); i !== -1; i = text.indexOf(oldText, i + 1)) count++;
  if (count > 1)
    throw new ToolFailure(
      `oldText is ambiguous: it occurs ${count} times in ${quoted}; include more surrounding text so that it matches exactly once`,
    );
  return first;
}

function lineOf(text: string, index: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < index; i = text.indexOf('\n', i + 1)) line++;
  return line;
}
