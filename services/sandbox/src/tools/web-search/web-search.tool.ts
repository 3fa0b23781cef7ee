import type { SearchHit, SearchProvider } from '@app/search-provider';
import { SearchFailedError } from '@app/search-provider';
import { runTool } from '../run-tool';
import { checkArgNames, requiredString } from '../tool-args';
import type { ToolSpec } from '../tool-spec';
import { ToolArgumentError, ToolFailure } from '../tool.errors';

/** Longer queries are refused: no engine uses more, and a model pasting a page in is a mistake. */
export const MAX_QUERY_CHARS = 400;

/**
 * The `web_search` tool: asks the configured provider and returns a numbered list of title, URL
 * and snippet. `maxResults` is the most one search returns; the model may ask for fewer.
 */
export function createWebSearchTool(provider: SearchProvider, maxResults: number): ToolSpec {
  return {
    name: 'web_search',
    readsOnly: true,
    description:
      'Search the web and return a numbered list of results, each with its title, URL and a short snippet. ' +
      `Returns at most ${maxResults} results. Read a result in full with web_fetch.`,
    parameters: {
      type: 'object',
      properties: {
        query: {
          type: 'string',
          description: 'What to search for, as you would type it into a search engine.',
          maxLength: MAX_QUERY_CHARS,
        },
        maxResults: {
          type: 'integer',
          minimum: 1,
          maximum: maxResults,
          description: `How many results to return (1-${maxResults}, default ${maxResults}).`,
        },
      },
      required: ['query'],
      additionalProperties: false,
    },
    execute: (args, ctx) =>
      runTool(args, ctx, async () => {
        checkArgNames(args, ['query', 'maxResults']);
        const query = requiredString(args, 'query').trim();
        if (query === '') throw new ToolArgumentError('"query" is empty; say what to search for');
        if (query.length > MAX_QUERY_CHARS)
          throw new ToolArgumentError(`"query" has ${query.length} characters; at most ${MAX_QUERY_CHARS} are allowed`);
        const wanted = requestedCount(args.maxResults, maxResults);
        try {
          return formatHits(query, await provider.search(query, { maxResults: wanted, signal: ctx.signal }));
        } catch (error) {
          if (error instanceof SearchFailedError) throw new ToolFailure(`web search failed: ${error.message}`);
          throw error;
        }
      }),
  };
}

function requestedCount(raw: unknown, cap: number): number {
  if (raw === undefined || raw === null) return cap;
  if (typeof raw !== 'number' || !Number.isInteger(raw) || raw < 1) {
    throw new ToolArgumentError(`"maxResults" must be a whole number from 1 to ${cap}, got ${JSON.stringify(raw)}`);
  }
  // Asking for more than the service allows is not the model's error to fix: it gets the most there is.
  return Math.min(raw, cap);
}

export function formatHits(query: string, hits: readonly SearchHit[]): string {
  if (hits.length === 0) return `No results for ${JSON.stringify(query)}.`;
  const lines = hits.map((hit, i) => [`${i + 1}. ${hit.title}`, `   ${hit.url}`, ...(hit.snippet ? [`   ${hit.snippet}`] : [])].join('\n'));
  return `${hits.length} result${hits.length === 1 ? '' : 's'} for ${JSON.stringify(query)}:\n\n${lines.join('\n\n')}`;
}
