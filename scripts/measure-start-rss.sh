#!/usr/bin/env bash
# Footprint of the all-in-one service (BENCHMARKS.md, "Footprint"): starts it as `npm start` does
# (the compiled dist/ build, made first when stale, in this process, not under npm), waits for
# /healthz 200, waits 10 s, prints the milliseconds to /healthz (and the CPU time they took), the
# service process's VmRSS and VmHWM (peak) in MiB and its process.memoryUsage()
# (scripts/print-memory-on-signal.js), then stops it.
# Usage: scripts/measure-start-rss.sh <DATA_DIR> [PORT] [compiled|ts-node]
#   (a missing or empty DATA_DIR is a fresh start; ts-node runs the TypeScript source as before dist/)
set -euo pipefail
cd "$(dirname "$0")/.."
data_dir="$1"
port="${2:-3999}"
runner="${3:-compiled}"
case "$runner" in
  compiled)
    node scripts/build-services.js
    # With the node options of package.json's start script (its V8 heap limit), as `npm start` runs it.
    read -r -a start_flags <<<"$(node -p "require('./package.json').scripts.start.trim().split(/\\s+/).slice(1, -1).join(' ')")"
    entry=("${start_flags[@]}" dist/services/standalone/src/main.js)
    ;;
  ts-node) entry=(-r ts-node/register/transpile-only -r tsconfig-paths/register services/standalone/src/main.ts) ;;
  *) echo "runner must be compiled or ts-node, not $runner" >&2; exit 2 ;;
esac
log="$(mktemp)"
start=$(date +%s%N)
DATA_DIR="$data_dir" PORT="$port" LOG_LEVEL=warn node -r ./scripts/print-memory-on-signal.js "${entry[@]}" >"$log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 1 1200); do
  curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break
  kill -0 "$pid" 2>/dev/null || { echo "the service exited:"; cat "$log"; exit 1; }
  sleep 0.1
done
curl -sf "http://127.0.0.1:$port/healthz" >/dev/null || { echo "no /healthz 200 within 120 s"; exit 1; }
ready=$(date +%s%N)
# CPU seconds the service spent until /healthz (user + system, clock ticks of 1/100 s): unlike the
# wall time, hardly moved by other work on the machine.
cpu_ms=$(awk '{ print ($14 + $15) * 10 }' "/proc/$pid/stat")
sleep 10
rss=$(awk '/VmRSS/ { print int($2 / 1024) }' "/proc/$pid/status")
peak=$(awk '/VmHWM/ { print int($2 / 1024) }' "/proc/$pid/status")
kill -WINCH "$pid"
sleep 0.5
echo "$runner: healthz after $(((ready - start) / 1000000)) ms (${cpu_ms} ms CPU); RSS ${rss} MiB, peak ${peak} MiB (10 s after /healthz)"
grep -o 'memoryUsage MiB.*' "$log" | tail -1
