import { AddressRefusedError } from '@app/common';
import type { IncomingMessage } from 'node:http';
import { ToolFailure } from '../tool.errors';
import { guardedGet } from './guarded-get';
import type { WebFetchConfig } from './web-fetch.config';

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

export interface FinalResponse {
  readonly url: URL;
  readonly response: IncomingMessage;
}

/**
 * GETs `start` and follows up to `maxRedirects` redirects by hand, so that every hop goes through
 * the same scheme, allow-list and address checks as the first one.
 */
export async function getFollowingRedirects(start: URL, config: WebFetchConfig, signal: AbortSignal): Promise<FinalResponse> {
  let url = start;
  for (let redirects = 0; ; redirects++) {
    const response = await getHop(url, start, config, signal);
    const location = response.headers.location;
    if (!REDIRECT_STATUSES.has(response.statusCode ?? 0) || !location) return { url, response };
    response.destroy();
    if (redirects === config.maxRedirects) {
      throw new ToolFailure(
        `too many redirects: ${start.href} still redirected after ${redirects} (the WEB_FETCH_MAX_REDIRECTS limit), last to ${location}`,
      );
    }
    url = redirectTarget(location, url);
  }
}

async function getHop(url: URL, start: URL, config: WebFetchConfig, signal: AbortSignal): Promise<IncomingMessage> {
  try {
    return await guardedGet(url, config.allowHosts, signal);
  } catch (error) {
    // A refusal on a later hop would be puzzling without saying where the redirects led.
    if (url === start || !(error instanceof ToolFailure || error instanceof AddressRefusedError)) throw error;
    throw new ToolFailure(`${start.href} redirected to ${url.href}, which failed: ${error.message}`);
  }
}

function redirectTarget(location: string, current: URL): URL {
  try {
    return new URL(location, current);
  } catch {
    throw new ToolFailure(`${current.href} redirects to ${JSON.stringify(location)}, which is not a valid URL`);
  }
}
