import { toToolResult } from './mcp-result';

describe('toToolResult', () => {
  it('joins text parts', () =>
    expect(
      toToolResult(
        {
          content: [
            { type: 'text', text: 'a' },
            { type: 'text', text: 'b' },
          ],
        },
        100,
      ),
    ).toEqual({ status: 'success', output: 'a\nb' }));
  it('marks isError results as errors', () =>
    expect(toToolResult({ content: [{ type: 'text', text: 'no' }], isError: true }, 100).status).toBe('error'));
  it('describes images and embedded resources', () => {
    const out = toToolResult(
      {
        content: [
          { type: 'image', data: 'AAAA', mimeType: 'image/png' },
          { type: 'resource', resource: { uri: 'file:///a.txt', text: 'hi' } },
        ],
      },
      100,
    ).output;
    expect(out).toBe('[image: image/png, 3 bytes]\n[resource file:///a.txt]\nhi');
  });
  it('falls back to structured content', () =>
    expect(toToolResult({ content: [], structuredContent: { a: 1 } }, 100).output).toBe('{"a":1}'));
  it('cuts long output and says so', () =>
    expect(toToolResult({ content: [{ type: 'text', text: 'x'.repeat(50) }] }, 10).output).toMatch(
      /^x{10}\n\[output truncated: 50 characters, 10 kept\]$/,
    ));
});
