import { SANDBOX_EGRESS } from '../../services/sandbox/src/egress/sandbox-forwarder';

// The shell commands of the egress benchmark and the reading of what they print. The same
// command runs on the host (bash -c, no proxy) and in the sandbox (through the proxy), so the
// two sides differ only in the route: curl's own timers (-w) start when curl starts its
// transfer, so neither the sandbox's start nor curl's process start is in them.

/** `curl -p`: a CONNECT tunnel even for http:// (what an https:// URL gets), without TLS's own cost. */
export type ProxyMode = 'direct' | 'forward' | 'tunnel';

export interface Download {
  readonly bytes: number;
  readonly seconds: number;
  readonly status: number;
}

export interface Connection {
  /** Connections curl opened for the request: 1 when it is a new one, as measured. */
  readonly connects: number;
  /** curl's start → first byte of the answer: connect, the proxy's judgement and its own connect, the request. */
  readonly toFirstByteMs: number;
  readonly status: number;
}

function curlFlags(mode: ProxyMode): string {
  // In the sandbox, HTTP_PROXY sends an http:// URL to the proxy as a plain request (its forward path).
  if (mode === 'direct') return `--noproxy '*'`;
  return mode === 'tunnel' ? '-p' : '';
}

/** One download of `url` to /dev/null, with the forwarder's CPU around it when there is one (see forwarderCpuNs). */
export function downloadCommand(url: string, mode: ProxyMode): string {
  const curl = `curl -sS ${curlFlags(mode)} -o /dev/null -w 'download %{size_download} %{time_total} %{http_code}\\n' '${url}'`;
  return `${FORWARDER_CPU_NS}; a=$(forwarder_cpu_ns); ${curl}; b=$(forwarder_cpu_ns); echo "forwarder $a $b"`;
}

/** `count` requests of `url` one after the other, each by a curl of its own, so each on a new connection. */
export function connectionsCommand(url: string, mode: ProxyMode, count: number): string {
  const format = 'connection %{num_connects} %{time_starttransfer} %{http_code}\\n';
  return `for i in $(seq ${count}); do curl -sS ${curlFlags(mode)} -o /dev/null -w '${format}' '${url}'; done`;
}

/**
 * A shell function printing the on-CPU nanoseconds of the sandbox's forwarder, every thread
 * summed (/proc/<pid>/task/<tid>/schedstat), or -1 where there is none (on the host). The
 * forwarder is the process whose argv[0] is the node bound in for it (pid 1's command line names
 * the forwarder's file too, so the file is no mark).
 */
const FORWARDER_CPU_NS =
  `forwarder_cpu_ns() { local p arg0 t ns sum=0; ` +
  `for p in /proc/[0-9]*; do read -r -d '' arg0 < "$p/cmdline"; [ "$arg0" = ${SANDBOX_EGRESS.node} ] || continue; ` +
  `for t in "$p"/task/*/schedstat; do read -r ns _ < "$t"; sum=$((sum + ns)); done; echo "$sum"; return; done; echo -1; }`;

export function parseDownload(output: string): { download?: Download; forwarderCpuMs?: number } {
  const download = /^download (\d+) ([\d.]+) (\d+)$/m.exec(output);
  const forwarder = /^forwarder (-?\d+) (-?\d+)$/m.exec(output);
  const cpuNs = forwarder && Number(forwarder[1]) >= 0 ? Number(forwarder[2]) - Number(forwarder[1]) : undefined;
  return {
    ...(download ? { download: { bytes: Number(download[1]), seconds: Number(download[2]), status: Number(download[3]) } } : {}),
    ...(cpuNs !== undefined ? { forwarderCpuMs: cpuNs / 1e6 } : {}),
  };
}

export function parseConnections(output: string): Connection[] {
  return [...output.matchAll(/^connection (\d+) ([\d.]+) (\d+)$/gm)].map((m) => ({
    connects: Number(m[1]),
    toFirstByteMs: Number(m[2]) * 1000,
    status: Number(m[3]),
  }));
}
