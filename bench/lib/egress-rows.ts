import type { EgressFigures } from '../egress';
import type { Row } from './report-row';

const ms = (n: number | undefined): string => (n !== undefined && Number.isFinite(n) ? `${n.toFixed(2)} ms` : 'n/a');
const mbs = (n: number): string => `${n.toFixed(0)} MB/s`;
const list = (xs: readonly number[] | undefined, digits: number): string => (xs ?? []).map((x) => x.toFixed(digits)).join(', ');

/** Benchmark 11's rows of the report. */
export function egressRows(f: EgressFigures): Row[] {
  const { direct, forward, tunnel } = f.throughput;
  const mib = Math.round(f.payloadBytes / 1024 / 1024);
  const download = `11. egress proxy: ${mib} MiB download with curl from a local server, ${f.runs} runs each (issue 31)`;
  const connections = `11b. egress proxy: ${f.connections} requests, each a curl of its own on a new connection (issue 31)`;
  const through = (label: string, t: typeof forward): Row[] => [
    [
      download,
      `${label}: median (runs)`,
      `${mbs(t.medianMbPerS)} (${list(t.mbPerS, 0)}); ${(direct.medianMbPerS / t.medianMbPerS).toFixed(1)}× slower than direct`,
      '',
      '',
    ],
    [
      download,
      `${label}: proxy CPU per MiB, the bench process (median; runs); its event loop busy over the command (median)`,
      `${ms(t.medianProxyCpuMsPerMiB)} (${list(t.proxyCpuMsPerMiB, 2)}); ${((t.medianEventLoopUtilization ?? Number.NaN) * 100).toFixed(0)} %`,
      '',
      '',
    ],
    [
      download,
      `${label}: forwarder CPU per MiB, in the sandbox (median; runs)`,
      `${ms(t.medianForwarderCpuMsPerMiB)} (${list(t.forwarderCpuMsPerMiB, 2)})`,
      '',
      '',
    ],
  ];
  const latency = (label: string, mode: keyof EgressFigures['latency']): Row => {
    const l = f.latency[mode];
    const added =
      mode === 'direct'
        ? ''
        : `; added p50 ${ms(l.p50 - f.latency.direct.p50)}, p95 ${ms(l.p95 - f.latency.direct.p95)}; proxy CPU ${ms(l.proxyCpuMs)} a connection`;
    return [connections, `${label}: curl start → first byte p50 / p95 / max`, `${ms(l.p50)} / ${ms(l.p95)} / ${ms(l.max)}${added}`, '', ''];
  };
  return [
    [
      download,
      'direct, on the host (no sandbox, no proxy): median (runs)',
      `${mbs(direct.medianMbPerS)} (${list(direct.mbPerS, 0)})`,
      '',
      '',
    ],
    ...through('through the proxy, plain request (http://)', forward),
    ...through('through the proxy, CONNECT tunnel (curl -p)', tunnel),
    [
      download,
      "diagnostic: the bench process's CPU for a sandboxed command with no transfer (subtracted above); load average at the end",
      `${ms(f.commandCpuMs)}; ${f.loadAtEnd}`,
      '',
      '',
    ],
    latency('direct, on the host', 'direct'),
    latency('through the proxy, plain request', 'forward'),
    latency('through the proxy, CONNECT tunnel', 'tunnel'),
    [
      `11c. egress proxy: sandboxed \`true\`, call to result, ${f.commandStartMs.runs} runs (issue 31)`,
      'p50 with SANDBOX_NETWORK=egress (proxy session, forwarder started first) / off; difference',
      `${ms(f.commandStartMs.egress)} / ${ms(f.commandStartMs.off)}; ${ms(f.commandStartMs.egress - f.commandStartMs.off)}`,
      '',
      '',
    ],
    [
      `${download}; ${connections}`,
      'every transfer complete (size, status, recorded by the proxy; a new connection each)',
      f.incomplete.length === 0 ? 'yes' : `NO: ${f.incomplete.join('; ')}`,
      'yes',
      f.incomplete.length === 0 ? 'yes' : '**no**',
    ],
  ];
}
