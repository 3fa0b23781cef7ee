import { htmlToMarkdown } from './html-to-markdown';

const pageUrl = new URL('https://docs.example/guide/intro');

describe('htmlToMarkdown', () => {
  it('turns headings, links and lists into markdown, with links made absolute', () => {
    const html = `<!doctype html><html><head><title>Guide</title></head><body><main>
      <h2>Install</h2><p>Read <a href="../api/ref">the reference</a> first.</p><ul><li>one</li><li>two</li></ul></main></body></html>`;
    const page = htmlToMarkdown(html, pageUrl);
    expect(page.title).toBe('Guide');
    expect(page.markdown).toContain('## Install');
    expect(page.markdown).toContain('[the reference](https://docs.example/api/ref)');
    expect(page.markdown).toMatch(/^-\s+one$/m);
  });

  it('leaves out scripts, styles and inline image data', () => {
    const html = `<html><head><style>body{color:red}</style><script>window.secret = 1</script></head><body>
      <p>Visible text <img alt="chart" src="data:image/png;base64,AAAA"></p><script>track()</script><noscript>enable js</noscript></body></html>`;
    const { markdown } = htmlToMarkdown(html, pageUrl);
    expect(markdown).toContain('Visible text chart');
    expect(markdown).not.toMatch(/secret|track|color:red|enable js|base64/);
  });

  it('keeps the text of a fragment that has no html or body element', () => {
    expect(htmlToMarkdown('<p>just a <b>fragment</b></p>', pageUrl)).toEqual({ title: '', markdown: 'just a **fragment**' });
  });

  it('falls back to the whole body when Readability finds no article', () => {
    expect(htmlToMarkdown('<html><body><div>OK</div></body></html>', pageUrl).markdown).toBe('OK');
  });
});
