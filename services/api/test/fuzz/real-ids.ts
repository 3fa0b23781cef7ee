import type { RawResponse } from './raw-http-client';
import type { FuzzRequest, Pools, WireRequest } from './request-arbitraries';

/** How the suite reads the service outside the fuzzed traffic (as tenant A). */
export type ReadApi = (path: string) => Promise<{ status: number; body: unknown }>;

/** docs/api.md: a message is redelivered at most 10 times; one more is a 409. */
const MAX_REDELIVERIES = 10;
/** Deliveries read before giving up on finding one that may be redelivered now. */
const DELIVERY_TRIES = 20;

interface Call {
  readonly taskId: string;
  readonly callId: string;
}
interface Delivery {
  readonly taskId: string;
  readonly deliveryId: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const json = (res: RawResponse): unknown => {
  try {
    return JSON.parse(res.body.toString('utf8'));
  } catch {
    return undefined;
  }
};

/**
 * The real ids the fuzz names, gathered from the service's answers: tasks of both tenants, and
 * tenant A's tool calls waiting for approval, artifacts and webhook deliveries. Whether a request
 * on a call or a delivery succeeds depends on its state (a decided call, a pending delivery: 409),
 * so for one that must succeed `poolsFor` reads that state first and names only a call still
 * waiting, a delivery that may be redelivered now.
 */
export class RealIds implements Pools {
  readonly own: string[] = [];
  readonly other: string[] = [];
  readonly pendingCalls: Call[] = [];
  readonly artifacts: { taskId: string; path: string }[] = [];
  readonly deliveries: Delivery[] = [];
  private readonly known = new Set<string>();
  private readonly redelivered = new Map<string, number>();
  private nextDelivery = 0;

  constructor(
    readonly keys: { readonly A: string; readonly B: string },
    private readonly read: ReadApi,
  ) {}

  task(tenant: 'A' | 'B', pick: number): string | undefined {
    const list = tenant === 'A' ? this.own : this.other;
    return list.length === 0 ? undefined : list[pick % list.length];
  }

  // The newest calls are the ones most likely still waiting.
  pending(pick: number): Call | undefined {
    const calls = this.pendingCalls;
    return calls.length === 0 ? undefined : calls[calls.length - 1 - (pick % Math.min(calls.length, 40))];
  }

  artifact(pick: number) {
    return this.artifacts.length === 0 ? undefined : this.artifacts[pick % this.artifacts.length];
  }

  delivery(pick: number): Delivery | undefined {
    return this.deliveries.length === 0 ? undefined : this.deliveries[pick % this.deliveries.length];
  }

  addCalls(tasks: unknown[]): void {
    for (const t of tasks) {
      if (!isObject(t) || !Array.isArray(t.pendingApprovals)) continue;
      for (const p of t.pendingApprovals as { callId: string }[])
        this.addOnce(`call ${t.id}/${p.callId}`, this.pendingCalls, { taskId: String(t.id), callId: p.callId });
    }
  }

  addArtifacts(taskId: string, files: unknown): void {
    if (!Array.isArray(files)) return;
    for (const f of files as { path: string }[]) this.addOnce(`artifact ${taskId}/${f.path}`, this.artifacts, { taskId, path: f.path });
  }

  addDeliveries(taskId: string, deliveries: unknown): void {
    if (!Array.isArray(deliveries)) return;
    for (const d of deliveries as { id: string }[]) this.addOnce(`delivery ${d.id}`, this.deliveries, { taskId, deliveryId: d.id });
  }

  /** Real ids from a real answer (tenant A's, or a create of B); a decided call leaves the pool. */
  harvest(wire: WireRequest, res: RawResponse | undefined): void {
    if (!res || res.sse || res.status < 200 || res.status > 202 || (wire.method !== 'POST' && wire.method !== 'GET')) return;
    if (wire.grants !== 'A' && wire.grants !== 'B') return;
    const body = json(res) as { data?: { id?: unknown; tasks?: unknown; deliveries?: unknown }; files?: unknown } | undefined;
    if (!isObject(body)) return;
    const path = wire.pathname;
    if (wire.method === 'POST' && path === '/api/v1/tasks' && typeof body.data?.id === 'string')
      (wire.grants === 'A' ? this.own : this.other).push(body.data.id);
    if (wire.grants !== 'A') return;
    if (wire.method === 'GET' && path === '/api/v1/tasks' && Array.isArray(body.data?.tasks)) this.addCalls(body.data.tasks);
    if (wire.method === 'GET' && /^\/api\/v1\/tasks\/task_[0-9a-f]+$/.test(path)) this.addCalls([body.data]);
    const decided = /^\/api\/v1\/tasks\/(task_[0-9a-f]+)\/tools\/([^/]+)\/approve$/.exec(path);
    if (wire.method === 'POST' && decided) this.dropCall(decided[1], decided[2]);
    const redelivered = /^\/api\/v1\/tasks\/task_[0-9a-f]+\/webhook-deliveries\/([^/]+)\/redeliver$/.exec(path)?.[1];
    if (wire.method === 'POST' && redelivered) this.redelivered.set(redelivered, (this.redelivered.get(redelivered) ?? 0) + 1);
    const deliveriesOf = /^\/api\/v1\/tasks\/(task_[0-9a-f]+)\/webhook-deliveries$/.exec(path)?.[1];
    if (deliveriesOf) this.addDeliveries(deliveriesOf, body.data?.deliveries);
    const filesOf = /^\/api\/v1\/tasks\/(task_[0-9a-f]+)\/artifacts$/.exec(path)?.[1];
    if (filesOf) this.addArtifacts(filesOf, body.files);
  }

  /**
   * The pools to build `request` from. For a valid approval, the waiting calls are read afresh;
   * for a valid redelivery, the one delivery it names is one that is not pending now and that the
   * fuzz has not redelivered ten times (none, when no such delivery is found).
   */
  async poolsFor(request: FuzzRequest): Promise<Pools> {
    if ('raw' in request || request.expected === undefined || !('success' in request.expected)) return this;
    if (request.endpoint === 'POST /tasks/{id}/tools/{callId}/approve') {
      const waiting = await this.callWaitingNow();
      return this.with({ pending: () => waiting });
    }
    if (request.endpoint === 'POST /tasks/{id}/webhook-deliveries/{deliveryId}/redeliver') {
      const ready = await this.deliveryReadyNow();
      return this.with({ delivery: () => ready });
    }
    return this;
  }

  private with(pinned: Partial<Pick<Pools, 'pending' | 'delivery'>>): Pools {
    return {
      keys: this.keys,
      task: (tenant, pick) => this.task(tenant, pick),
      pending: (pick) => this.pending(pick),
      artifact: (pick) => this.artifact(pick),
      delivery: (pick) => this.delivery(pick),
      ...pinned,
    };
  }

  /** The newest call of the pool that is still waiting; the ones found decided leave the pool. */
  private async callWaitingNow(): Promise<Call | undefined> {
    for (let call = this.pendingCalls.at(-1); call !== undefined; call = this.pendingCalls.at(-1)) {
      const { body } = await this.read(`/api/v1/tasks/${call.taskId}`);
      const waiting = (body as { data?: { pendingApprovals?: { callId: string }[] } }).data?.pendingApprovals;
      if (waiting?.some((p) => p.callId === call!.callId)) return call;
      this.pendingCalls.pop();
    }
    return undefined;
  }

  private async deliveryReadyNow(): Promise<Delivery | undefined> {
    for (let i = 0; i < Math.min(this.deliveries.length, DELIVERY_TRIES); i++) {
      const candidate = this.deliveries[this.nextDelivery++ % this.deliveries.length];
      if ((this.redelivered.get(candidate.deliveryId) ?? 0) >= MAX_REDELIVERIES) continue;
      const { body } = await this.read(`/api/v1/tasks/${candidate.taskId}/webhook-deliveries`);
      const listed = (body as { data?: { deliveries?: { id: string; status: string }[] } }).data?.deliveries;
      const now = listed?.find((d) => d.id === candidate.deliveryId);
      if (now && now.status !== 'pending') return candidate;
    }
    return undefined;
  }

  private dropCall(taskId: string, callId: string): void {
    const at = this.pendingCalls.findIndex((c) => c.taskId === taskId && c.callId === callId);
    if (at >= 0) this.pendingCalls.splice(at, 1);
  }

  private addOnce<T>(key: string, list: T[], item: T): void {
    if (this.known.has(key)) return;
    this.known.add(key);
    list.push(item);
  }
}
