#!/usr/bin/env bash
# Footprint of the distributed mode (BENCHMARKS.md, "Footprint"): starts one compiled process per
# service (artifacts, sandbox, orchestrator, api) against the servers named by DATABASE_URL,
# NATS_URL, TEMPORAL_ADDRESS and MINIO_* (as infra/dev/ensure-test-servers.sh prints them), waits
# for each one's /healthz 200, idles 10 s, prints each process's VmRSS and VmHWM in MiB, and stops
# them. Each one's main-thread breakdown (process.memoryUsage() on SIGWINCH, scripts/print-memory-on-signal.js)
# follows its RSS. Uses its own event-store schema, subject prefix, bucket and task queue, like the tests.
# Usage: scripts/measure-distributed-rss.sh
set -euo pipefail
cd "$(dirname "$0")/.."
: "${DATABASE_URL:?}" "${NATS_URL:?}" "${TEMPORAL_ADDRESS:?}" "${MINIO_ENDPOINT:?}" "${MINIO_ACCESS_KEY:?}" "${MINIO_SECRET_KEY:?}"
node scripts/build-services.js >/dev/null
run="rss$(date +%s)"
root="$(mktemp -d)"
chmod 711 "$root"
export EVENT_STORE=postgres EVENT_STORE_SCHEMA="dist_$run" BUS=nats NATS_SUBJECT_PREFIX="dist-$run" OBJECT_STORE=minio \
  MINIO_BUCKET="ats-dist-$run" RUNNER=temporal TEMPORAL_TASK_QUEUE="agent-loop-$run" LOG_LEVEL=warn \
  SECRETS_KEY="$(head -c 32 /dev/urandom | base64)"
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null; psql -q "$DATABASE_URL" -c "DROP SCHEMA IF EXISTS dist_$run CASCADE" >/dev/null 2>&1 || true; rm -rf "$root"' EXIT
port=4100
for service in artifacts sandbox orchestrator api; do
  port=$((port + 1))
  if [ "$service" = api ]; then port_env=(PORT="$port"); else port_env=(HEALTH_PORT="$port"); fi
  data_dir="$root/$service"
  [ "$service" = sandbox ] && data_dir="$root/sandbox-volume"
  env "${port_env[@]}" DATA_DIR="$data_dir" node -r ./scripts/print-memory-on-signal.js "dist/services/$service/src/main.js" >"$root/$service.log" 2>&1 &
  pids+=($!)
  start=$(date +%s%N)
  for _ in $(seq 1 300); do
    curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break
    kill -0 "${pids[-1]}" 2>/dev/null || { echo "$service exited:"; cat "$root/$service.log"; exit 1; }
    sleep 0.1
  done
  curl -sf "http://127.0.0.1:$port/healthz" >/dev/null || { echo "$service: no /healthz 200 within 30 s"; cat "$root/$service.log"; exit 1; }
  echo "$service: /healthz after $((($(date +%s%N) - start) / 1000000)) ms"
done
sleep 10
i=0
for service in artifacts sandbox orchestrator api; do
  pid="${pids[$i]}"
  i=$((i + 1))
  kill -WINCH "$pid"
  sleep 0.2
  breakdown="$(grep -a 'memoryUsage MiB' "$root/$service.log" | tail -1 | sed 's/^memoryUsage MiB //')"
  echo "$service: RSS $(awk '/VmRSS/ { print int($2 / 1024) }' "/proc/$pid/status") MiB, peak $(awk '/VmHWM/ { print int($2 / 1024) }' "/proc/$pid/status") MiB (10 s after all are up; main thread: $breakdown)"
done
