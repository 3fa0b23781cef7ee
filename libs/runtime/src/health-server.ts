import type { INestApplicationContext } from '@nestjs/common';
import { Logger } from '@nestjs/common';
import type { Server } from 'node:http';
import { createServer } from 'node:http';
import { Readiness, ServiceMetrics, readinessBody } from '@app/metrics';

type Answer = { status: number; type: string; body: string };

const JSON_TYPE = 'application/json';
const STARTING: Answer = { status: 503, type: JSON_TYPE, body: '{"status":"starting"}' };

/**
 * The operations endpoints on HEALTH_PORT: `GET /healthz` → 200 {"status":"ok"} (liveness),
 * `GET /readyz` → 200 or 503 naming the dependency that is down, `GET /metrics` → the Prometheus
 * text exposition; 503 {"status":"starting"} until the service's app is handed over.
 */
export class HealthServer {
  private answer: (url: string | undefined) => Promise<Answer> = async () => STARTING;

  private constructor(private readonly server: Server) {}

  /**
   * Bound before the service starts: a port another process holds (a second worker given the
   * same HEALTH_PORT) is one clear error at once, before this one takes any work.
   */
  static async listen(port: number, host: string): Promise<HealthServer> {
    const logger = new Logger('Health');
    const health: HealthServer = new HealthServer(
      createServer((req, res) => {
        const url = req.method === 'GET' || req.method === 'HEAD' ? req.url : undefined;
        health.answer(url).then(
          ({ status, type, body }) => res.writeHead(status, { 'content-type': type }).end(body),
          (error: unknown) => {
            logger.error(`${url ?? req.method}: ${error instanceof Error ? error.message : String(error)}`);
            res.writeHead(500, { 'content-type': JSON_TYPE }).end('{"status":"error"}');
          },
        );
      }),
    );
    await new Promise<void>((resolve, reject) => {
      health.server.once('error', (error: NodeJS.ErrnoException) => reject(new Error(listenFailure(port, host, error))));
      health.server.listen(port, host, resolve);
    });
    return health;
  }

  /**
   * Answers from the started app's metrics and readiness. It stays open while the app closes (so
   * /readyz can say 503 meanwhile) when the app imports HealthModule, whose shutdown hook closes it.
   */
  serve(app: INestApplicationContext): void {
    const metrics = app.get(ServiceMetrics);
    const readiness = app.get(Readiness);
    const logger = new Logger('Health');
    this.answer = async (url) => {
      switch (url) {
        case '/healthz':
          return { status: 200, type: JSON_TYPE, body: '{"status":"ok"}' };
        case '/readyz': {
          const report = await readiness.report();
          for (const [name, reason] of Object.entries(report.reasons)) logger.warn(`not ready: ${name} is down: ${reason}`);
          return { status: report.ready ? 200 : 503, type: JSON_TYPE, body: JSON.stringify(readinessBody(report)) };
        }
        case '/metrics': {
          const { contentType, body } = await metrics.exposition();
          return { status: 200, type: contentType, body };
        }
        default:
          return { status: 404, type: JSON_TYPE, body: '{"status":"not found"}' };
      }
    };
  }

  /** Stops listening and ends every connection, the requests in flight included; resolves once closed. Idempotent. */
  async close(): Promise<void> {
    if (!this.server.listening) return;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }
}

function listenFailure(port: number, host: string, error: NodeJS.ErrnoException): string {
  if (error.code === 'EADDRINUSE') {
    return `HEALTH_PORT ${port} is already in use on ${host}: another process (another worker?) listens there; give each process its own HEALTH_PORT`;
  }
  return `HEALTH_PORT ${port} cannot be listened on at ${host}: ${error.code ?? error.message}`;
}
