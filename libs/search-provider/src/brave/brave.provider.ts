import { fetchSearchJson } from '../search-request';
import { resultList, toHits } from '../search-hits';
import type { SearchHit, SearchOptions, SearchProvider } from '../search-provider.port';

export const BRAVE_DEFAULT_URL = 'https://api.search.brave.com/res/v1/web/search';
/** Brave's web search returns at most 20 results per request. */
const BRAVE_MAX_COUNT = 20;

/** The Brave Search API: `GET …/web/search?q=…&count=…` with the key in `X-Subscription-Token`. */
export class BraveProvider implements SearchProvider {
  readonly name = 'brave';

  constructor(
    private readonly endpoint: URL,
    private readonly apiKey: string,
    private readonly timeoutMs: number,
  ) {}

  async search(query: string, { maxResults, signal }: SearchOptions): Promise<SearchHit[]> {
    const url = new URL(this.endpoint);
    url.searchParams.set('q', query);
    url.searchParams.set('count', String(Math.min(maxResults, BRAVE_MAX_COUNT)));
    const answer = await fetchSearchJson({
      provider: this.name,
      url,
      init: { method: 'GET', headers: { accept: 'application/json', 'x-subscription-token': this.apiKey } },
      timeoutMs: this.timeoutMs,
      signal,
      refusalHint: 'check BRAVE_API_KEY',
      secret: this.apiKey,
    });
    return toHits(leavesOutWeb(answer) ? [] : resultList(answer, this.name, 'web', 'results'), 'description', maxResults);
  }
}

/** Brave leaves out `web` entirely when nothing matched. */
function leavesOutWeb(answer: unknown): boolean {
  return typeof answer === 'object' && answer !== null && !Array.isArray(answer) && (answer as Record<string, unknown>).web === undefined;
}
