import { mcpToolName } from './mcp-tool-names';

describe('mcpToolName', () => {
  it('joins server and tool', () => expect(mcpToolName('github', 'create_issue')).toBe('mcp__github__create_issue'));
  it('replaces characters a model refuses', () => expect(mcpToolName('fs', 'files.read/all')).toBe('mcp__fs__files_read_all'));
  it('keeps long names within 64 characters and distinct', () => {
    const a = mcpToolName('server', `${'x'.repeat(80)}a`);
    const b = mcpToolName('server', `${'x'.repeat(80)}b`);
    expect(a.length).toBeLessThanOrEqual(64);
    expect(a).not.toBe(b);
  });
});
