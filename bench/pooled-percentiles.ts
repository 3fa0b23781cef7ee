import { readFileSync } from 'node:fs';
import { summarize } from './lib/stats';

// Percentiles over a series of benchmark 8 runs, from the JSON lines BENCH_WEBHOOK_SAMPLES collects:
// every run's samples pooled, and each run's own p99.
// Usage: npx ts-node --transpile-only bench/pooled-percentiles.ts <samples.jsonl> [target ms]

const [file, targetArg] = process.argv.slice(2);
if (!file) {
  console.error('usage: pooled-percentiles.ts <samples.jsonl> [target ms]');
  process.exit(2);
}
const runs = readFileSync(file, 'utf8')
  .split('\n')
  .filter((line) => line.trim() !== '')
  .map((line) => (JSON.parse(line) as { latencyMs: number[] }).latencyMs);
const fixed = (n: number) => n.toFixed(2);
const pooled = summarize(runs.flat());
console.log(
  `${runs.length} runs, ${pooled.count} samples pooled: p50 ${fixed(pooled.p50)} ms, p90 ${fixed(pooled.p90)} ms, p99 ${fixed(pooled.p99)} ms, max ${fixed(pooled.max)} ms`,
);
const perRun = runs.map((samples) => summarize(samples).p99);
console.log(`each run's p99, ms: ${perRun.map(fixed).join(', ')}`);
console.log(`median of the runs' p99: ${fixed(summarize(perRun).p50)} ms`);
if (targetArg) console.log(`runs with p99 ≤ ${targetArg} ms: ${perRun.filter((p) => p <= Number(targetArg)).length} of ${runs.length}`);
