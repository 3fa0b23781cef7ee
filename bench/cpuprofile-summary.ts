import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

// Summarises a V8 .cpuprofile (from BENCH_CPU_PROF): self time by function and by package/folder.
// Usage: npx ts-node --transpile-only bench/cpuprofile-summary.ts <file.cpuprofile> [top=25] [--from µs --to µs]
// --from/--to keep only the samples in that window of the monotonic clock (V8's profile clock, the
// same as process.hrtime in another process on the host), as benchmark 8 logs for its burst.

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const args = process.argv.slice(2);
const option = (name: string): number | undefined => {
  const at = args.indexOf(name);
  if (at < 0) return undefined;
  const [value] = args.splice(at, 2).slice(1);
  return Number(value);
};
const fromUs = option('--from') ?? -Infinity;
const toUs = option('--to') ?? Infinity;
const [file, topArg] = args;
if (!file) {
  console.error('usage: cpuprofile-summary.ts <file.cpuprofile> [top]');
  process.exit(2);
}
const top = Number(topArg ?? 25);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const selfUs = new Map<number, number>();
let sampledAtUs = profile.startTime;
profile.samples.forEach((id, i) => {
  sampledAtUs += profile.timeDeltas[i] ?? 0;
  if (sampledAtUs < fromUs || sampledAtUs > toUs) return;
  selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
});
const totalUs = Math.min(profile.endTime, toUs) - Math.max(profile.startTime, fromUs);

const where = (url: string): string => {
  if (!url) return '(native/vm)';
  const path = url.replace(/^file:\/\//, '');
  const nm = path.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const parts = path.slice(nm + 13).split('/');
    return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
  }
  if (path.startsWith('node:')) return path;
  const rel = relative(process.cwd(), path);
  return rel.split('/').slice(0, 3).join('/');
};

const byFunction = new Map<string, number>();
const byPlace = new Map<string, number>();
for (const [id, us] of selfUs) {
  const frame = byId.get(id)!.callFrame;
  const fn = `${frame.functionName || '(anonymous)'}  ${where(frame.url)}${frame.url ? `:${frame.lineNumber + 1}` : ''}`;
  byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
  byPlace.set(where(frame.url), (byPlace.get(where(frame.url)) ?? 0) + us);
}
const print = (title: string, map: Map<string, number>) => {
  console.log(`\n${title}`);
  for (const [name, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`${(us / 1000).toFixed(0).padStart(8)} ms ${((us / totalUs) * 100).toFixed(1).padStart(5)} %  ${name}`);
  }
};
console.log(`profile: ${(totalUs / 1e6).toFixed(1)} s wall, ${profile.samples.length} samples`);
print('self time by package / folder', byPlace);
print('self time by function', byFunction);
