import type { ClientConfig } from 'pg';
import { Client } from 'pg';

const RECONNECT_MS = 1000;

export interface PgNotificationHandlers {
  readonly onNotify: (payload: string) => void;
  /** Notifications sent while disconnected are lost; the caller catches up here. */
  readonly onReconnect: () => void;
  readonly reportError: (error: unknown) => void;
}

/** LISTENs on one channel over a dedicated connection (a pooled one would drop the LISTEN). */
export class PgNotificationListener {
  private client?: Client;
  private stopped = false;
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly config: ClientConfig,
    private readonly channel: string,
    private readonly handlers: PgNotificationHandlers,
  ) {}

  async start(): Promise<void> {
    const client = new Client(this.config);
    client.on('notification', (n) => n.channel === this.channel && n.payload && this.handlers.onNotify(n.payload));
    client.on('error', (error) => {
      this.handlers.reportError(error);
      this.reconnect(client);
    });
    client.on('end', () => this.reconnect(client));
    this.client = client;
    await client.connect();
    await client.query(`LISTEN ${this.channel}`);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.client?.end().catch(() => undefined);
  }

  private reconnect(lost: Client): void {
    if (this.stopped || lost !== this.client) return;
    this.client = undefined;
    lost.end().catch(() => undefined);
    // retryStart() catches its own failures, so the timer has nothing to wait for.
    this.timer = setTimeout(() => void this.retryStart(), RECONNECT_MS).unref();
  }

  private async retryStart(): Promise<void> {
    try {
      await this.start();
      this.handlers.onReconnect();
    } catch (error) {
      this.handlers.reportError(error);
      if (this.client) this.reconnect(this.client);
    }
  }
}
