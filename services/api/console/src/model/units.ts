// How the console writes amounts a person reads at a glance: rounded, with their unit.

/** `$0.0042`: four decimals, a cent is too coarse for a model call; null: a call had no price. */
export const formatUsd = (usd: number | null): string => (usd === null ? 'cost unknown' : `$${usd.toFixed(4)}`);

/** `340 ms`, `1.2 s`. */
export const formatDuration = (ms: number): string => (ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`);

/** `512 B`, `12.3 kB`, `1.2 MB`, `3.4 GB`: decimal units, as browsers' download lists write them. */
export function formatBytes(bytes: number): string {
  if (bytes < 1e3) return `${bytes} B`;
  if (bytes < 1e6) return `${(bytes / 1e3).toFixed(1)} kB`;
  if (bytes < 1e9) return `${(bytes / 1e6).toFixed(1)} MB`;
  return `${(bytes / 1e9).toFixed(1)} GB`;
}
