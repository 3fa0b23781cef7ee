import { withTimeout } from './timing';

/** The few JSON calls the benchmarks make for set-up and tear-down (not measured). */
export class ApiClient {
  constructor(
    readonly baseUrl: string,
    readonly apiKey: string,
  ) {}

  get authHeader(): Record<string, string> {
    return { authorization: `Bearer ${this.apiKey}` };
  }

  async createTask(message: string): Promise<string> {
    const body = await this.call('POST', '/api/v1/tasks', { message });
    return (body.data as { id: string }).id;
  }

  async getTask(id: string): Promise<{ status: string; lastEventId: number; turn: number }> {
    const body = await this.call('GET', `/api/v1/tasks/${id}`);
    return body.data as { status: string; lastEventId: number; turn: number };
  }

  /** A follow-up message: it queues a turn. */
  async sendMessage(id: string, message: string): Promise<void> {
    await this.call('POST', `/api/v1/tasks/${id}/messages`, { message });
  }

  /** Forks `id` after event `afterEventId`; returns the new task's id. */
  async fork(id: string, afterEventId: number): Promise<string> {
    const body = await this.call('POST', `/api/v1/tasks/${id}/fork`, { afterEventId });
    return (body.data as { id: string }).id;
  }

  async cancel(id: string): Promise<string> {
    const body = await this.call('POST', `/api/v1/tasks/${id}/cancel`, {});
    return (body.data as { status: string }).status;
  }

  private async call(method: string, path: string, json?: unknown): Promise<{ data: unknown }> {
    const response = await withTimeout(
      `${method} ${path}`,
      fetch(`${this.baseUrl}${path}`, {
        method,
        headers: { ...this.authHeader, ...(json === undefined ? {} : { 'content-type': 'application/json' }) },
        body: json === undefined ? undefined : JSON.stringify(json),
      }),
      10_000,
    );
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path}: HTTP ${response.status} ${text.slice(0, 300)}`);
    return JSON.parse(text) as { data: unknown };
  }
}
