import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector';
import { join } from 'node:path';

/**
 * A V8 CPU profile of this process over `during`, written as `<dir>/<name>.cpuprofile` (read it
 * with bench/cpuprofile-summary.ts): for code that runs in the bench process itself, such as the
 * egress proxy, where --cpu-prof would also profile the bench's start and every other benchmark.
 */
export async function profileOwnCpu<T>(dir: string, name: string, during: () => Promise<T>): Promise<T> {
  const session = new Session();
  session.connect();
  const post = (method: string, params?: object) =>
    new Promise<unknown>((resolve, reject) =>
      session.post(method, params ?? {}, (error, result) => (error ? reject(error) : resolve(result))),
    );
  try {
    await post('Profiler.enable');
    // Finer than V8's 1 ms default: a MiB through the proxy takes a few milliseconds.
    await post('Profiler.setSamplingInterval', { interval: 100 });
    await post('Profiler.start');
    const result = await during();
    const { profile } = (await post('Profiler.stop')) as { profile: object };
    await writeFile(join(dir, `${name}.cpuprofile`), JSON.stringify(profile));
    return result;
  } finally {
    session.disconnect();
  }
}
