import { fetchSearchJson } from '../search-request';
import { resultList, toHits } from '../search-hits';
import type { SearchHit, SearchOptions, SearchProvider } from '../search-provider.port';

export const TAVILY_DEFAULT_URL = 'https://api.tavily.com/search';
/** Tavily's `max_results` goes up to 20. */
const TAVILY_MAX_COUNT = 20;

/** The Tavily search API: `POST /search` with a JSON body and the key as a bearer token. */
export class TavilyProvider implements SearchProvider {
  readonly name = 'tavily';

  constructor(
    private readonly endpoint: URL,
    private readonly apiKey: string,
    private readonly timeoutMs: number,
  ) {}

  async search(query: string, { maxResults, signal }: SearchOptions): Promise<SearchHit[]> {
    const answer = await fetchSearchJson({
      provider: this.name,
      url: this.endpoint,
      init: {
        method: 'POST',
        headers: { accept: 'application/json', 'content-type': 'application/json', authorization: `Bearer ${this.apiKey}` },
        body: JSON.stringify({ query, max_results: Math.min(maxResults, TAVILY_MAX_COUNT), search_depth: 'basic' }),
      },
      timeoutMs: this.timeoutMs,
      signal,
      refusalHint: 'check TAVILY_API_KEY',
      secret: this.apiKey,
    });
    return toHits(resultList(answer, this.name, 'results'), 'content', maxResults);
  }
}
