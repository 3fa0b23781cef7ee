import type { TaskStreamEvent } from '@agentic-task-service/client';
import { formatBytes, formatDuration } from './units';

/** One connection a call's command made through the service's egress proxy (an `egress` event). */
export type Egress = Extract<TaskStreamEvent, { type: 'egress' }>['data'];

/** `↗ pypi.org:443 — 12.3 kB out / 1.2 MB in, 340 ms`, or `↗ evil.example:443 — refused: <why>`. */
export function egressText(egress: Egress): string {
  const where = `↗ ${egress.host}:${egress.port}`;
  if (!egress.allowed) return `${where} — ${egress.reason}`;
  return `${where} — ${formatBytes(egress.bytesOut)} out / ${formatBytes(egress.bytesIn)} in, ${formatDuration(egress.durationMs)}`;
}

/** `1 connection`, `3 connections, 1 refused`. */
export function egressSummary(connections: readonly Egress[]): string {
  const refused = connections.filter((egress) => !egress.allowed).length;
  const count = `${connections.length} ${connections.length === 1 ? 'connection' : 'connections'}`;
  return refused > 0 ? `${count}, ${refused} refused` : count;
}
