import { AddressRefusedError, bareHostname, guardedLookup } from '@app/common';
import * as http from 'node:http';
import * as https from 'node:https';
import { ToolFailure } from '../tool.errors';
import { checkHop } from './hop-policy';

const REQUEST_HEADERS = {
  'User-Agent': 'agentic-task-service web_fetch',
  Accept: 'text/html, text/plain, application/json, */*;q=0.5',
  'Accept-Encoding': 'gzip, deflate, br',
};

/**
 * One GET, without following redirects, that connects only to an allowed address. Resolves with
 * the response once its headers arrive; the caller reads or destroys the body.
 */
export function guardedGet(url: URL, allowHosts: ReadonlySet<string>, signal: AbortSignal): Promise<http.IncomingMessage> {
  const { allowListed } = checkHop(url, allowHosts);
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const request = client.request(
      {
        protocol: url.protocol,
        hostname: bareHostname(url),
        port: url.port || undefined,
        path: `${url.pathname}${url.search}`,
        method: 'GET',
        headers: REQUEST_HEADERS,
        // No pooled sockets: a pooled one may have been opened without this lookup.
        agent: false,
        lookup: allowListed ? undefined : guardedLookup('WEB_FETCH_ALLOW_HOSTS'),
        signal,
      },
      resolve,
    );
    request.on('error', (error) =>
      reject(
        error instanceof ToolFailure || error instanceof AddressRefusedError
          ? error
          : new ToolFailure(`could not fetch ${url.href}: ${error.message}`),
      ),
    );
    request.end();
  });
}
