#!/usr/bin/env bash
# Footprint of the all-in-one service (BENCHMARKS.md, "Footprint"): starts it as `npm start` does
# (ts-node, in this process, not under npm), waits for /healthz 200, waits 10 s, prints the seconds
# to /healthz and the service process's VmRSS and VmHWM (peak) in MiB, then stops it.
# Usage: scripts/measure-start-rss.sh <DATA_DIR> [PORT]  (a missing or empty DATA_DIR is a fresh start)
set -euo pipefail
cd "$(dirname "$0")/.."
data_dir="$1"
port="${2:-3999}"
log="$(mktemp)"
DATA_DIR="$data_dir" PORT="$port" LOG_LEVEL=warn \
  node -r ts-node/register/transpile-only -r tsconfig-paths/register services/standalone/src/main.ts >"$log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; rm -f "$log"' EXIT
start=$(date +%s%N)
for _ in $(seq 1 600); do
  curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break
  kill -0 "$pid" 2>/dev/null || { echo "the service exited:"; cat "$log"; exit 1; }
  sleep 0.2
done
curl -sf "http://127.0.0.1:$port/healthz" >/dev/null || { echo "no /healthz 200 within 120 s"; exit 1; }
ready=$(date +%s%N)
sleep 10
rss=$(awk '/VmRSS/ { print int($2 / 1024) }' "/proc/$pid/status")
peak=$(awk '/VmHWM/ { print int($2 / 1024) }' "/proc/$pid/status")
echo "healthz after $(((ready - start) / 1000000)) ms; RSS ${rss} MiB, peak ${peak} MiB (10 s after /healthz)"
