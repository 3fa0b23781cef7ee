/** One dependency's probe: resolves when it answers, rejects (or outlives the bound) when it does not. */
export type ReadinessCheck = (signal: AbortSignal) => Promise<unknown>;

export interface ReadinessReport {
  readonly ready: boolean;
  /** Each dependency this process uses, by name. */
  readonly dependencies: Record<string, 'up' | 'down'>;
  /** Why each down one is down: for the log only (an error text may name hosts; /readyz needs no auth). */
  readonly reasons: Record<string, string>;
}

/** The JSON body of `GET /readyz`: 200 `{"status":"ready",…}` or 503 `{"status":"unavailable",…}`, naming each dependency. */
export function readinessBody(report: ReadinessReport): { status: 'ready' | 'unavailable'; dependencies: Record<string, 'up' | 'down'> } {
  return { status: report.ready ? 'ready' : 'unavailable', dependencies: report.dependencies };
}

/** A probe that has not answered within this long counts as down: /readyz answers within it. */
export const READINESS_TIMEOUT_MS = 2_000;

/**
 * The dependencies this process needs to do its work (event store, bus, Temporal, object store:
 * whichever it uses), probed together for `GET /readyz`. Services add their own at start.
 */
export class Readiness {
  private readonly checks = new Map<string, ReadinessCheck>();

  constructor(private readonly timeoutMs = READINESS_TIMEOUT_MS) {}

  /** Adds (or replaces) the probe of `name`; returns what removes it again. */
  add(name: string, check: ReadinessCheck): () => void {
    this.checks.set(name, check);
    return () => {
      if (this.checks.get(name) === check) this.checks.delete(name);
    };
  }

  async report(): Promise<ReadinessReport> {
    const results = await Promise.all([...this.checks].map(async ([name, check]) => [name, await this.probe(check)] as const));
    const dependencies: Record<string, 'up' | 'down'> = {};
    const reasons: Record<string, string> = {};
    for (const [name, reason] of results) {
      dependencies[name] = reason === undefined ? 'up' : 'down';
      if (reason !== undefined) reasons[name] = reason;
    }
    return { ready: Object.keys(reasons).length === 0, dependencies, reasons };
  }

  /** Undefined when the dependency answered, else why not. */
  private async probe(check: ReadinessCheck): Promise<string | undefined> {
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        controller.abort();
        reject(new Error(`no answer within ${this.timeoutMs} ms`));
      }, this.timeoutMs);
    });
    try {
      await Promise.race([check(controller.signal), timeout]);
      return undefined;
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    } finally {
      clearTimeout(timer);
    }
  }
}
