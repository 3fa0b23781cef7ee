import { createFileTools } from './file-tools';

describe('createFileTools', () => {
  const tools = createFileTools();

  it('offers the four file tools under the names of the public contract', () => {
    expect(tools.map((t) => t.name)).toEqual(['list_files', 'read_file', 'write_file', 'edit_file']);
  });

  it('declares object schemas whose required arguments are all described properties', () => {
    const required: Record<string, string[] | undefined> = {
      list_files: undefined,
      read_file: ['path'],
      write_file: ['path', 'content'],
      edit_file: ['path', 'oldText', 'newText'],
    };
    for (const tool of tools) {
      const {
        type,
        properties,
        required: req,
      } = tool.parameters as { type: string; properties: Record<string, { type: string }>; required?: string[] };
      expect(type).toBe('object');
      expect(req).toEqual(required[tool.name]);
      for (const name of req ?? []) expect(properties[name]).toMatchObject({ type: 'string' });
    }
  });

  it('answers ill-typed arguments to every tool with an error result, never a throw', async () => {
    for (const tool of tools) {
      await expect(tool.execute({ path: 42 }, { workspaceRoot: '/nonexistent' })).resolves.toMatchObject({
        status: 'error',
        output: expect.stringContaining('invalid arguments'),
      });
    }
  });
});
