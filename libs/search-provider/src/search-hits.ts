import type { SearchHit } from './search-provider.port';
import { SearchFailedError } from './search-provider.port';
import { snippetText } from './snippet-text';

const MAX_TITLE_CHARS = 300;
const MAX_SNIPPET_CHARS = 600;
const MAX_URL_CHARS = 2048;

/** The list a provider's answer holds at `path`, or a SearchFailedError naming what is missing. */
export function resultList(answer: unknown, provider: string, ...path: string[]): unknown[] {
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) {
    throw new SearchFailedError(`${provider} answered JSON that is not a search answer`);
  }
  let node: unknown = answer;
  for (const key of path) node = typeof node === 'object' && node !== null ? (node as Record<string, unknown>)[key] : undefined;
  if (!Array.isArray(node)) throw new SearchFailedError(`${provider} answered without a "${path.join('.')}" list of results`);
  return node;
}

/**
 * Hits from a provider's raw entries: only http(s) URLs, each URL once, markup stripped, fields
 * bounded, at most `maxResults`. `snippetField` names where the provider keeps its snippet.
 */
export function toHits(entries: readonly unknown[], snippetField: string, maxResults: number): SearchHit[] {
  const hits: SearchHit[] = [];
  const seen = new Set<string>();
  for (const entry of entries) {
    if (hits.length >= maxResults) break;
    if (typeof entry !== 'object' || entry === null) continue;
    const fields = entry as Record<string, unknown>;
    const url = httpUrl(fields.url);
    if (url === undefined || seen.has(url)) continue;
    seen.add(url);
    hits.push({
      title: snippetText(fields.title, MAX_TITLE_CHARS) || url,
      url,
      snippet: snippetText(fields[snippetField], MAX_SNIPPET_CHARS),
    });
  }
  return hits;
}

function httpUrl(raw: unknown): string | undefined {
  if (typeof raw !== 'string' || raw.length > MAX_URL_CHARS) return undefined;
  try {
    const url = new URL(raw);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : undefined;
  } catch {
    return undefined;
  }
}
