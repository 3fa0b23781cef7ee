import { execFile } from 'node:child_process';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import type { EgressRecord } from '@app/contracts';
import { BubblewrapProvider } from '../services/sandbox/src/provider/bubblewrap/bubblewrap.provider';
import { sandboxConfigFromEnv } from '../services/sandbox/src/provider/sandbox.config';
import type { Connection, ProxyMode } from './lib/curl-timings';
import { connectionsCommand, downloadCommand, parseConnections, parseDownload } from './lib/curl-timings';
import { profileOwnCpu } from './lib/own-cpu-profile';
import { startPayloadServer } from './lib/payload-server-process';
import { median, percentile } from './lib/stats';
import { sleep } from './lib/timing';
import { makeTmpDir, removeDir } from './lib/tmp-dir';

export interface EgressThroughput {
  /** Each measured run's size / curl's time_total, MB (10^6 bytes) per second. */
  readonly mbPerS: readonly number[];
  readonly medianMbPerS: number;
  /**
   * Proxied runs: the bench process's CPU (user + system, every thread; it hosts the proxy) over
   * the command, less a command's CPU without a transfer (commandCpuMs), per MiB; each run.
   */
  readonly proxyCpuMsPerMiB?: readonly number[];
  readonly medianProxyCpuMsPerMiB?: number;
  /** Proxied runs: how busy the bench process's event loop (the service's, in production) was over the command, 0–1, median. */
  readonly medianEventLoopUtilization?: number;
  /** Proxied runs: the sandbox's forwarder process on a CPU over the transfer, per MiB; each run. */
  readonly forwarderCpuMsPerMiB?: readonly number[];
  readonly medianForwarderCpuMsPerMiB?: number;
}

export interface ConnectionLatency {
  readonly p50: number;
  readonly p95: number;
  readonly max: number;
  /** Proxied: the bench process's CPU per connection, less a command's without any (commandCpuMs). */
  readonly proxyCpuMs?: number;
}

export interface EgressFigures {
  readonly payloadBytes: number;
  readonly runs: number;
  /** On the host, no sandbox and no proxy; through the proxy as a plain request; as a CONNECT tunnel. */
  readonly throughput: Readonly<Record<ProxyMode, EgressThroughput>>;
  /** The bench process's CPU for a sandboxed command that makes no connection (median): subtracted above. */
  readonly commandCpuMs: number;
  /**
   * A sandboxed `true`, call to result, p50 over `commandStarts` runs: with SANDBOX_NETWORK=egress
   * (the proxy session, and the forwarder started in the sandbox before the command) and off.
   */
  readonly commandStartMs: { readonly egress: number; readonly off: number; readonly runs: number };
  readonly connections: number;
  /** curl's start → first byte of a 3-byte answer, on a new connection each time, ms. */
  readonly latency: Readonly<Record<ProxyMode, ConnectionLatency>>;
  /** What went wrong with a transfer (short, wrong status, not recorded by the proxy); empty when none. */
  readonly incomplete: readonly string[];
  /** 1-minute load average at the end: above ~0.5 at the start (machine facts) or here, something else used the cores. */
  readonly loadAtEnd: number;
}

export interface EgressOptions {
  readonly payloadMiB: number;
  readonly commandStarts: number;
  readonly runs: number;
  readonly connections: number;
  /** When set, the bench process (the proxy) is profiled over the proxied downloads into this directory. */
  readonly cpuProfDir?: string;
  readonly log: (line: string) => void;
}

const TASK_ID = `task_${'e'.repeat(32)}`;
const OFF_TASK_ID = `task_${'0'.repeat(32)}`;
const MiB = 1024 * 1024;
const MODES: readonly ProxyMode[] = ['direct', 'forward', 'tunnel'];
/** Between two commands: the task's next launcher is started ahead after each (warm-launchers.ts), outside the next one's CPU window. */
const SETTLE_MS = 300;
const COMMAND_TIMEOUT_MS = 60_000;

const run = promisify(execFile);

/**
 * 11. Egress proxy (issue 31): a `payloadMiB` download from a local server on 127.0.0.2 (its own
 * process), with curl, on the host directly and from the sandbox through the proxy (the
 * forwarder inside, the unix socket, the proxy in this process), as a plain proxy request and as
 * a CONNECT tunnel; `runs` of each after one warm-up, interleaved. Then the added latency of a
 * connection: `connections` requests one after the other, each by a curl of its own. And what
 * egress adds to every command, network or not: a sandboxed `true` with it and without.
 */
export async function benchEgress(options: EgressOptions): Promise<EgressFigures> {
  const payloadBytes = options.payloadMiB * MiB;
  const server = await startPayloadServer('127.0.0.2');
  const dataDir = await makeTmpDir('egress');
  const config = sandboxConfigFromEnv({ SANDBOX_NETWORK: 'egress', SANDBOX_EGRESS_ALLOW_HOSTS: `127.0.0.2:${server.port}` });
  const provider = new BubblewrapProvider(config, dataDir);
  const offline = new BubblewrapProvider(sandboxConfigFromEnv({ SANDBOX_NETWORK: 'off' }), dataDir);
  const incomplete: string[] = [];
  try {
    const health = await provider.check();
    if (!health.ok) throw new Error(`bubblewrap does not work here: ${health.reason}`);
    await provider.create(TASK_ID);
    const inSandbox = async (command: string) => {
      await sleep(SETTLE_MS);
      const before = process.cpuUsage();
      const loopBefore = performance.eventLoopUtilization();
      const startedAt = performance.now();
      const result = await provider.exec(TASK_ID, { command, env: {}, timeoutMs: COMMAND_TIMEOUT_MS });
      const wallMs = performance.now() - startedAt;
      const loop = performance.eventLoopUtilization(loopBefore).utilization;
      const cpu = process.cpuUsage(before);
      if (result.exitCode !== 0) throw new Error(`sandboxed command failed (${result.exitCode}): ${result.output.slice(0, 300)}`);
      return { output: result.output, egress: result.egress ?? [], cpuMs: (cpu.user + cpu.system) / 1000, wallMs, loop };
    };
    const onHost = async (command: string) => {
      await sleep(SETTLE_MS);
      const { stdout } = await run('bash', ['-c', command], { env: { PATH: '/usr/bin:/bin' }, timeout: COMMAND_TIMEOUT_MS });
      return { output: stdout, egress: [] as EgressRecord[], cpuMs: 0, wallMs: 0, loop: 0 };
    };
    const runIn = (mode: ProxyMode) => (mode === 'direct' ? onHost : inSandbox);

    const emptyCpu: number[] = [];
    const starts = { egress: [] as number[], off: [] as number[] };
    for (let i = 0; i < options.commandStarts + 1; i++) {
      const { cpuMs, wallMs } = await inSandbox('true');
      await sleep(SETTLE_MS);
      const startedAt = performance.now();
      await offline.exec(OFF_TASK_ID, { command: 'true', env: {} });
      if (i === 0) continue; // each provider's first command starts its task's first launcher
      emptyCpu.push(cpuMs);
      starts.egress.push(wallMs);
      starts.off.push(performance.now() - startedAt);
    }
    const commandCpuMs = median(emptyCpu);
    const commandStartMs = { egress: median(starts.egress), off: median(starts.off), runs: options.commandStarts };

    const url = `${server.origin}/bytes/${payloadBytes}`;
    const samples = new Map(
      MODES.map((mode) => [mode, { mbPerS: [] as number[], proxyCpu: [] as number[], forwarderCpu: [] as number[], loop: [] as number[] }]),
    );
    const downloads = async () => {
      for (let round = 0; round <= options.runs; round++) {
        for (const mode of MODES) {
          const { output, egress, cpuMs, loop } = await runIn(mode)(downloadCommand(url, mode));
          const { download, forwarderCpuMs } = parseDownload(output);
          const problem = downloadProblem(download, egress, mode, payloadBytes);
          if (problem) incomplete.push(`${mode}, run ${round}: ${problem}`);
          if (round === 0 || problem || !download) continue; // round 0 warms up each path
          const s = samples.get(mode)!;
          s.mbPerS.push(download.bytes / 1e6 / download.seconds);
          if (mode !== 'direct') s.proxyCpu.push((cpuMs - commandCpuMs) / (download.bytes / MiB));
          if (mode !== 'direct') s.loop.push(loop);
          if (forwarderCpuMs !== undefined) s.forwarderCpu.push(forwarderCpuMs / (download.bytes / MiB));
        }
        if (round > 0) options.log(`egress: download round ${round} of ${options.runs}`);
      }
    };
    await (options.cpuProfDir ? profileOwnCpu(options.cpuProfDir, 'egress-proxy-downloads', downloads) : downloads());

    const latency = {} as Record<ProxyMode, ConnectionLatency>;
    for (const mode of MODES) {
      await runIn(mode)(connectionsCommand(`${server.origin}/`, mode, 5)); // warm-up
      const { output, egress, cpuMs } = await runIn(mode)(connectionsCommand(`${server.origin}/`, mode, options.connections));
      const connections = parseConnections(output);
      const problem = connectionsProblem(connections, egress, mode, options.connections);
      if (problem) incomplete.push(`${mode}, connections: ${problem}`);
      latency[mode] = {
        ...latencyOf(connections.map((c) => c.toFirstByteMs)),
        ...(mode !== 'direct' ? { proxyCpuMs: (cpuMs - commandCpuMs) / options.connections } : {}),
      };
    }
    options.log(`egress: ${options.connections} connections measured each way`);

    const throughput = {} as Record<ProxyMode, EgressThroughput>;
    for (const mode of MODES) {
      const s = samples.get(mode)!;
      throughput[mode] = {
        mbPerS: s.mbPerS,
        medianMbPerS: median(s.mbPerS),
        ...(mode !== 'direct'
          ? { proxyCpuMsPerMiB: s.proxyCpu, medianProxyCpuMsPerMiB: median(s.proxyCpu), medianEventLoopUtilization: median(s.loop) }
          : {}),
        ...(s.forwarderCpu.length > 0 ? { forwarderCpuMsPerMiB: s.forwarderCpu, medianForwarderCpuMsPerMiB: median(s.forwarderCpu) } : {}),
      };
    }
    const figures = {
      ...{ payloadBytes, runs: options.runs, throughput, commandCpuMs, commandStartMs },
      ...{ connections: options.connections, latency, incomplete },
    };
    return { ...figures, loadAtEnd: Math.round(loadavg()[0] * 100) / 100 };
  } finally {
    await provider.destroy(TASK_ID).catch(() => undefined);
    await offline.destroy(OFF_TASK_ID).catch(() => undefined);
    await provider.close();
    await offline.close();
    await server.close();
    await removeDir(dataDir);
  }
}

function downloadProblem(
  download: ReturnType<typeof parseDownload>['download'],
  egress: readonly EgressRecord[],
  mode: ProxyMode,
  bytes: number,
) {
  if (!download) return 'curl reported no transfer';
  if (download.status !== 200 || download.bytes !== bytes) return `HTTP ${download.status}, ${download.bytes} of ${bytes} bytes`;
  if (mode === 'direct') return undefined;
  const recorded = egress.filter((r) => r.allowed).reduce((sum, r) => sum + r.bytesIn, 0);
  if (egress.length !== 1 || recorded < bytes) return `the proxy recorded ${egress.length} connection(s), ${recorded} bytes in`;
  return undefined;
}

function connectionsProblem(connections: readonly Connection[], egress: readonly EgressRecord[], mode: ProxyMode, count: number) {
  const fresh = connections.filter((c) => c.status === 200 && c.connects === 1).length;
  if (fresh !== count) return `${fresh} of ${count} requests answered 200 on a new connection`;
  const allowed = egress.filter((r) => r.allowed).length;
  if (mode !== 'direct' && allowed !== count) return `the proxy recorded ${allowed} of ${count} connections`;
  return undefined;
}

function latencyOf(samples: readonly number[]): ConnectionLatency {
  const sorted = [...samples].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p95: percentile(sorted, 95), max: sorted[sorted.length - 1] ?? Number.NaN };
}
