import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { LocalObjectStore } from '../libs/object-store/src/local/local-object-store';
import { exceedsJsonDepth } from '../services/api/src/http/json-depth';
import { BubblewrapProvider } from '../services/sandbox/src/provider/bubblewrap/bubblewrap.provider';
import { sandboxConfigFromEnv } from '../services/sandbox/src/provider/sandbox.config';

export interface MovedBoundsFigures {
  /** Both depth scans of a million '[' (one over the limit, one inside a string). */
  readonly jsonDepthScanMs: number;
  /** A sandboxed command printing 100 MB, cut at the output limit, start to result. */
  readonly outputFloodMs: number;
  readonly outputFloodCut: boolean;
  readonly streamedBytes: number;
  /** Resident set growth of this process while 200 MB go into the local object store and back. */
  readonly streamRssGrowthBytes: number;
  readonly streamedIntact: boolean;
}

export const MOVED_BOUND_TARGETS = {
  jsonDepthScanMs: 1_000,
  outputFloodMs: 15_000,
  /** A quarter of what is streamed: buffering the object anywhere would cost all of it. */
  streamRssGrowthFraction: 0.25,
} as const;

/**
 * 7. Speed and memory bounds that unit and integration tests used to assert (where a slow or
 * loaded machine made them flaky, and a fast one made them prove little). The tests keep the
 * behaviour (the scan stops at the limit, the output is cut, the bytes come back intact); these
 * keep the numbers.
 */
export async function benchMovedBounds(options: { log: (m: string) => void }): Promise<MovedBoundsFigures> {
  const jsonDepthScanMs = timeJsonDepthScan();
  options.log(`moved bounds: JSON depth scan ${jsonDepthScanMs.toFixed(0)} ms`);
  const flood = await timeOutputFlood();
  options.log(`moved bounds: 100 MB output flood ${flood.ms.toFixed(0)} ms`);
  const stream = await measureObjectStreaming(200 * 1024 * 1024);
  options.log(`moved bounds: RSS growth streaming 200 MB ${(stream.rssGrowth / 1024 / 1024).toFixed(1)} MB`);
  return {
    jsonDepthScanMs,
    outputFloodMs: flood.ms,
    outputFloodCut: flood.cut,
    streamedBytes: stream.bytes,
    streamRssGrowthBytes: stream.rssGrowth,
    streamedIntact: stream.intact,
  };
}

function timeJsonDepthScan(): number {
  const started = performance.now();
  const deep = exceedsJsonDepth('['.repeat(1_000_000), 32);
  const quoted = exceedsJsonDepth(`"${'['.repeat(1_000_000)}"`, 32);
  if (!deep || quoted) throw new Error('the JSON depth scan gave a wrong answer');
  return performance.now() - started;
}

async function timeOutputFlood(): Promise<{ ms: number; cut: boolean }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'ats-bench-flood-'));
  const provider = new BubblewrapProvider(sandboxConfigFromEnv({ SANDBOX_MAX_OUTPUT_BYTES: String(64 * 1024) }), dataDir);
  try {
    const taskId = `task_${'f'.repeat(32)}`;
    await provider.create(taskId);
    const started = performance.now();
    const result = await provider.exec(taskId, {
      command: 'head -c 100000000 /dev/zero | tr "\\0" a',
      env: {},
      timeoutMs: 60_000,
    });
    return {
      ms: performance.now() - started,
      cut: result.limitHit === 'output',
    };
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function measureObjectStreaming(size: number): Promise<{ bytes: number; rssGrowth: number; intact: boolean }> {
  const dir = await mkdtemp(join(tmpdir(), 'ats-bench-stream-'));
  const store = new LocalObjectStore(dir);
  try {
    const block = randomBytes(1024 * 1024);
    let sent = 0;
    const body = new Readable({
      read() {
        if (sent >= size) return void this.push(null);
        sent += block.length;
        this.push(block);
      },
    });
    const before = process.memoryUsage().rss;
    let peak = before;
    const put = await store.put('big/object.bin', body);
    peak = Math.max(peak, process.memoryUsage().rss);
    let read = 0;
    for await (const chunk of await store.get('big/object.bin')) {
      read += (chunk as Buffer).length;
      peak = Math.max(peak, process.memoryUsage().rss);
    }
    return {
      bytes: size,
      rssGrowth: peak - before,
      intact: put.size === size && read === size,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
