import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

export interface WebhookReceiver {
  readonly port: number;
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  /** Every request received in full, in order. */
  readonly received: readonly ReceivedRequest[];
  close(): Promise<void>;
}

/**
 * A real HTTP receiver on an ephemeral loopback port. `answer` gets each request once its body has
 * arrived; `close` also drops connections left hanging.
 */
export async function startWebhookReceiver(
  answer: (request: ReceivedRequest, res: ServerResponse, req: IncomingMessage) => void,
): Promise<WebhookReceiver> {
  const received: ReceivedRequest[] = [];
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const request = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
    received.push(request);
    answer(request, res, req);
  };
  // Node's http server ignores a handler's promise; a failure still surfaces as an unhandled rejection.
  const server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    origin: `http://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
