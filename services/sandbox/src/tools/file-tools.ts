import { editFileTool } from './edit-file.tool';
import { listFilesTool } from './list-files.tool';
import { readFileTool } from './read-file.tool';
import type { ToolSpec } from './tool-spec';
import { writeFileTool } from './write-file.tool';

/** The workspace file tools, under the names of the public contract. */
export function createFileTools(): ToolSpec[] {
  return [listFilesTool, readFileTool, writeFileTool, editFileTool];
}
