import autocannon from 'autocannon';

export interface LoadResult {
  /** Every response's latency (ms, float, from the request being written to its full response), 2xx only. */
  readonly latencies2xx: number[];
  readonly responses: number;
  readonly non2xx: number;
  readonly statusCodes: Record<string, number>;
  readonly errors: number;
  readonly timeouts: number;
  /** Requests still unanswered when the run gave up waiting (paced runs only). */
  readonly unanswered?: number;
  /** Measured duration in seconds, as autocannon reports it. */
  readonly durationS: number;
}

export interface LoadOptions {
  readonly url: string;
  readonly body: string;
  readonly headers: Record<string, string>;
  readonly overallRate: number;
  readonly connections: number;
  readonly durationS: number;
}

/**
 * One autocannon run. Latencies are collected from autocannon's per-response event with their
 * full float precision, and autocannon's own coordinated-omission "correction" is switched off:
 * with a per-connection rate of 10/s it assumes a 1 ms expected interval (ceil(1/rate)) and would
 * inject L-1 synthetic samples for every response of L ms.
 */
export async function runAutocannon(options: LoadOptions): Promise<LoadResult> {
  const latencies2xx: number[] = [];
  const statusCodes: Record<string, number> = {};
  let responses = 0;
  let finish!: (error: Error | null, result: autocannon.Result) => void;
  const done = new Promise<autocannon.Result>((resolve, reject) => {
    finish = (error, result) => (error ? reject(error) : resolve(result));
  });
  const instance = autocannon(
    {
      url: options.url,
      method: 'POST',
      headers: options.headers,
      body: options.body,
      overallRate: options.overallRate,
      connections: options.connections,
      duration: options.durationS,
      timeout: 10,
      ignoreCoordinatedOmission: true,
    },
    (error, result) => finish(error, result),
  );
  instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
    responses++;
    statusCodes[statusCode] = (statusCodes[statusCode] ?? 0) + 1;
    if (statusCode >= 200 && statusCode < 300) latencies2xx.push(responseTime);
  });
  const result = await done;
  return {
    latencies2xx,
    responses,
    non2xx: result.non2xx,
    statusCodes,
    errors: result.errors,
    timeouts: result.timeouts,
    durationS: result.duration,
  };
}
