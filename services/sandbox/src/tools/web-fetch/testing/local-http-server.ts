import type { IncomingHttpHeaders, RequestListener } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LocalHttpServer {
  readonly port: number;
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  /** Every request the server received, in order. */
  readonly requests: ReadonlyArray<{ readonly url: string; readonly headers: IncomingHttpHeaders }>;
  close(): Promise<void>;
}

/** A real HTTP server on an ephemeral loopback port; `close` also drops connections left hanging. */
export async function startLocalHttpServer(handler: RequestListener): Promise<LocalHttpServer> {
  const requests: Array<{ url: string; headers: IncomingHttpHeaders }> = [];
  const server = createServer((req, res) => {
    requests.push({ url: req.url ?? '', headers: req.headers });
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    origin: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
