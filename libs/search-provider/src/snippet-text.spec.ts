import { snippetText } from './snippet-text';

describe('snippetText', () => {
  it('removes highlighting tags and decodes entities', () => {
    expect(snippetText('The <strong>Node.js</strong> runtime&#x27;s docs &amp; guides &#8212; &lt;v20&gt;', 500)).toBe(
      "The Node.js runtime's docs & guides — <v20>",
    );
  });

  it('collapses whitespace and leaves unknown entities alone', () => {
    expect(snippetText('  a\n\n b\t&bogus; c  ', 500)).toBe('a b &bogus; c');
  });

  it('cuts long text with an ellipsis within the bound', () => {
    const cut = snippetText('word '.repeat(100), 20);
    expect(cut.length).toBeLessThanOrEqual(20);
    expect(cut.endsWith('…')).toBe(true);
  });

  it('gives an empty string for anything that is not a string', () => {
    expect(snippetText(undefined, 10)).toBe('');
    expect(snippetText(42, 10)).toBe('');
  });
});
