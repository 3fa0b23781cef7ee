import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface DroppingProxy {
  readonly url: string;
  /** Stream connections the proxy cut. */
  readonly drops: number;
  close(): Promise<void>;
}

/**
 * An HTTP proxy in front of the service that passes everything through, except that every
 * text/event-stream answer is cut after `eventsPerConnection` events: the proxy sends half of
 * the next event's block and destroys the socket, as a crashing instance or a load balancer's idle
 * cut would. Everything else (task reads, approvals) goes through untouched.
 */
export async function startDroppingProxy(target: string, eventsPerConnection: number): Promise<DroppingProxy> {
  const upstream = new URL(target);
  let drops = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const forward = httpRequest(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        if (!String(answer.headers['content-type']).startsWith('text/event-stream')) return void answer.pipe(res);
        let pending = '';
        let events = 0;
        let dropped = false;
        answer.setEncoding('utf8');
        answer.on('data', (chunk: string) => {
          if (dropped) return; // chunks already read before the destroy
          pending += chunk;
          for (let end = pending.indexOf('\n\n'); end >= 0; end = pending.indexOf('\n\n')) {
            const block = pending.slice(0, end + 2);
            pending = pending.slice(end + 2);
            if (/^id:/m.test(block) && events === eventsPerConnection) {
              drops++;
              dropped = true;
              answer.destroy();
              // The events before the cut must reach the client, then the response breaks off
              // mid-event. A reset (destroy) would let the client's kernel drop bytes it had
              // received but not yet handed over, so the client resumed from an older event again
              // and again, backing off each time (a console test timed out on it): close with a
              // FIN instead, which delivers everything before it and leaves the chunked body
              // unfinished, a broken response to the client.
              res.write(block.slice(0, Math.floor(block.length / 2)), () => res.socket?.end());
              return;
            }
            if (/^id:/m.test(block)) events++;
            res.write(block);
          }
        });
        answer.on('end', () => dropped || res.end(pending));
      },
    );
    forward.on('error', () => res.socket?.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get drops() {
      return drops;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
