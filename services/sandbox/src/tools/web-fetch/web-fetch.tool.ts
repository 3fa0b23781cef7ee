import { runTool } from '../run-tool';
import { checkArgNames, requiredString } from '../tool-args';
import type { ToolSpec } from '../tool-spec';
import { ToolArgumentError, ToolFailure } from '../tool.errors';
import { withDeadline } from './deadline';
import { reportPage } from './page-report';
import { getFollowingRedirects } from './redirects';
import type { WebFetchConfig } from './web-fetch.config';

/**
 * The `web_fetch` tool: GETs a public http(s) URL and returns its readable text. Private,
 * loopback, link-local and other non-public addresses are refused unless their `host:port` is in
 * `config.allowHosts`; build the config with `webFetchConfigFromEnv` (see there for the env names).
 */
export function createWebFetchTool(config: WebFetchConfig): ToolSpec {
  return {
    name: 'web_fetch',
    readsOnly: true,
    description:
      'Fetch a web page by GET and return it as text: HTML is reduced to its main content as markdown (links kept), ' +
      'plain text, markdown, JSON and XML come back as they are; images and other binary content are refused. ' +
      `Only public http(s) addresses are reachable. Follows up to ${config.maxRedirects} redirects; reads at most ${config.maxBytes} bytes ` +
      `and returns at most ${config.maxOutputChars} characters, marking any cut; gives up after ${config.timeoutMs} ms. ` +
      'Does not run JavaScript, send cookies or fill in forms.',
    parameters: {
      type: 'object',
      properties: {
        url: { type: 'string', description: 'Absolute http:// or https:// URL of the page, e.g. https://example.com/docs/intro.' },
      },
      required: ['url'],
      additionalProperties: false,
    },
    execute: (args, ctx) =>
      runTool(args, ctx, async () => {
        checkArgNames(args, ['url']);
        const url = parseUrl(requiredString(args, 'url'));
        const page = await withDeadline(config.timeoutMs, ctx.signal, async (signal) => {
          const { url: finalUrl, response } = await getFollowingRedirects(url, config, signal);
          return reportPage(finalUrl, response, config);
        });
        // A non-2xx answer is an error result that still shows the page, which often says why.
        if (!page.ok) throw new ToolFailure(page.output);
        return page.output;
      }),
  };
}

function parseUrl(raw: string): URL {
  try {
    return new URL(raw.trim());
  } catch {
    throw new ToolArgumentError(`"url" must be an absolute URL such as https://example.com/page, got ${JSON.stringify(raw.slice(0, 200))}`);
  }
}
