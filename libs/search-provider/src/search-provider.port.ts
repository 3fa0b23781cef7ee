/** One web search result as the agent sees it. */
export interface SearchHit {
  readonly title: string;
  readonly url: string;
  /** Plain text: providers' highlighting markup is removed. */
  readonly snippet: string;
}

export interface SearchOptions {
  /** The most hits returned; a provider may return fewer. */
  readonly maxResults: number;
  /** Fires when the caller gives up (the tool call was cancelled). */
  readonly signal?: AbortSignal;
}

/**
 * A web search engine behind one interface (SearXNG, Brave, Tavily). `search` resolves to at
 * most `maxResults` hits with http(s) URLs, and rejects with `SearchFailedError` when the
 * provider cannot be reached, refuses, times out or answers something unreadable.
 */
export interface SearchProvider {
  /** `searxng`, `brave` or `tavily`: for logs and tool output. */
  readonly name: string;
  search(query: string, options: SearchOptions): Promise<SearchHit[]>;
}

/** The search did not produce results; the message says why and never holds an API key. */
export class SearchFailedError extends Error {
  readonly code = 'SEARCH.FAILED';
  constructor(message: string) {
    super(message);
    this.name = 'SearchFailedError';
  }
}
