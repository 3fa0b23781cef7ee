import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import TurndownService from 'turndown';

export interface ReadablePage {
  readonly title: string;
  readonly markdown: string;
}

const turndown = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-' });
turndown.remove(['script', 'style', 'noscript']);
// Inline images would spend the model's budget on base64; their alt text is what it can use.
turndown.addRule('dataImages', {
  filter: (node) => node.nodeName === 'IMG' && (node.getAttribute('src') ?? '').startsWith('data:'),
  replacement: (_content, node) => node.getAttribute('alt') ?? '',
});

/**
 * The main content of an HTML page as markdown: Readability picks the article, or the whole body
 * when it finds none. Links and images are made absolute against `pageUrl` so the model can follow them.
 */
export function htmlToMarkdown(html: string, pageUrl: URL): ReadablePage {
  // linkedom builds a usable document only from a whole page, so fragments get a skeleton.
  const { document } = parseHTML(/<html[\s>]/i.test(html) ? html : `<!doctype html><html><head></head><body>${html}</body></html>`);
  for (const node of document.querySelectorAll('script, style, noscript, template, iframe, object, embed')) node.remove();
  makeUrlsAbsolute(document, pageUrl);
  const pageTitle = (document.title ?? '').trim();
  const bodyHtml: string = document.body?.innerHTML ?? '';
  // Readability rewrites the document it reads, so it gets its own copy.
  const article = new Readability(document.cloneNode(true) as never).parse();
  const mainHtml = article?.content && article.textContent?.trim() ? article.content : bodyHtml;
  return { title: article?.title?.trim() || pageTitle, markdown: turndown.turndown(mainHtml).trim() };
}

function makeUrlsAbsolute(document: ReturnType<typeof parseHTML>['document'], pageUrl: URL): void {
  const base = absolute(document.querySelector('base[href]')?.getAttribute('href'), pageUrl) ?? pageUrl.href;
  for (const [selector, attribute] of [
    ['a[href]', 'href'],
    ['img[src]', 'src'],
  ] as const) {
    for (const element of document.querySelectorAll(selector)) {
      const resolved = absolute(element.getAttribute(attribute), new URL(base));
      if (resolved) element.setAttribute(attribute, resolved);
    }
  }
}

function absolute(reference: string | null | undefined, base: URL): string | undefined {
  if (!reference || reference.startsWith('#') || reference.startsWith('data:')) return undefined;
  try {
    return new URL(reference, base).href;
  } catch {
    return undefined;
  }
}
