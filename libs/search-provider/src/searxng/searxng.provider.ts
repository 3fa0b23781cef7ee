import { fetchSearchJson } from '../search-request';
import { resultList, toHits } from '../search-hits';
import type { SearchHit, SearchOptions, SearchProvider } from '../search-provider.port';

/**
 * A self-hosted SearXNG instance through its JSON API (`GET /search?q=…&format=json`; the
 * instance must list `json` under `search.formats` in its settings.yml). SearXNG has no count
 * parameter, so the first page is cut to `maxResults`.
 */
export class SearxngProvider implements SearchProvider {
  readonly name = 'searxng';
  private readonly searchUrl: URL;

  /** `baseUrl` is the instance's root, e.g. `http://127.0.0.1:8888` or `https://example.org/searx/`. */
  constructor(
    baseUrl: URL,
    private readonly timeoutMs: number,
  ) {
    this.searchUrl = new URL('search', baseUrl.href.endsWith('/') ? baseUrl : new URL(`${baseUrl.href}/`));
  }

  async search(query: string, { maxResults, signal }: SearchOptions): Promise<SearchHit[]> {
    const url = new URL(this.searchUrl);
    url.searchParams.set('q', query);
    url.searchParams.set('format', 'json');
    const answer = await fetchSearchJson({
      provider: this.name,
      url,
      init: { method: 'GET', headers: { accept: 'application/json' } },
      timeoutMs: this.timeoutMs,
      signal,
      // What a stock instance answers to format=json.
      refusalHint: 'the instance must list json under search.formats in its settings.yml',
    });
    return toHits(resultList(answer, this.name, 'results'), 'content', maxResults);
  }
}
