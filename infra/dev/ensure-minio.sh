#!/usr/bin/env bash
# Makes sure a MinIO server answers for the tests, and prints what to connect with on stdout as
# three KEY=value lines (everything else goes to stderr):
#   MINIO_ENDPOINT=http://127.0.0.1:59000
#   MINIO_ACCESS_KEY=ats-test
#   MINIO_SECRET_KEY=ats-test-secret
# Use:  minio_env="$(bash infra/dev/ensure-minio.sh)"; set -a; eval "$minio_env"; set +a
# (the assignment on its own line keeps a failure fatal under `set -e`; `export X=$(...)` would not).
# 1. MINIO_ENDPOINT, MINIO_ACCESS_KEY and MINIO_SECRET_KEY are all set and the endpoint is live: use them.
# 2. Otherwise run a private, throw-away server on 127.0.0.1:${ATS_MINIO_PORT:-59000} (fixed test
#    credentials, data and log under /var/tmp/ats-minio-$port), idempotently. A missing `minio`
#    binary is built once with `go install` at a pinned version; nothing else is downloaded.
set -euo pipefail

MINIO_MODULE="github.com/minio/minio@v0.0.0-20260212201848-7aac2a2c5b7c"
BUILD_WAIT_S=1800
START_WAIT_S=60

live() { curl -fsS -o /dev/null --max-time 2 "$1/minio/health/live" 2>/dev/null; }
print_env() { printf 'MINIO_ENDPOINT=%s\nMINIO_ACCESS_KEY=%s\nMINIO_SECRET_KEY=%s\n' "$1" "$2" "$3"; }

if [ -n "${MINIO_ENDPOINT:-}" ] && [ -n "${MINIO_ACCESS_KEY:-}" ] && [ -n "${MINIO_SECRET_KEY:-}" ] && live "$MINIO_ENDPOINT"; then
  print_env "$MINIO_ENDPOINT" "$MINIO_ACCESS_KEY" "$MINIO_SECRET_KEY"
  exit 0
fi

port="${ATS_MINIO_PORT:-59000}"
dir="/var/tmp/ats-minio-$port"
endpoint="http://127.0.0.1:$port"
user=ats-test
password=ats-test-secret
mkdir -p "$dir"
# Two test runs starting at once must not both start (or build) a server.
exec 9>"$dir/lock"
flock -w $((BUILD_WAIT_S + START_WAIT_S)) 9 || { echo "ensure-minio: timed out waiting for $dir/lock" >&2; exit 1; }

if live "$endpoint"; then
  print_env "$endpoint" "$user" "$password"
  exit 0
fi

gobin() { command -v go >/dev/null && echo "$(go env GOPATH)/bin"; }
find_minio() {
  command -v minio 2>/dev/null && return 0
  local bin
  bin="$(gobin)" && [ -x "$bin/minio" ] && echo "$bin/minio"
}

if ! minio="$(find_minio)"; then
  command -v go >/dev/null || { echo "ensure-minio: no minio binary and no Go toolchain to build $MINIO_MODULE" >&2; exit 1; }
  # Someone else (another shell, a provisioning step) may already be building it: wait, don't race.
  waited=0
  while pgrep -f "go install github.com/minio/minio@" >/dev/null && [ "$waited" -lt "$BUILD_WAIT_S" ]; do
    [ "$waited" = 0 ] && echo "ensure-minio: waiting for a minio build already running..." >&2
    sleep 5
    waited=$((waited + 5))
  done
  if ! minio="$(find_minio)"; then
    echo "ensure-minio: building $MINIO_MODULE (several minutes, once)..." >&2
    go install "$MINIO_MODULE" >&2
    minio="$(gobin)/minio"
  fi
fi

echo "ensure-minio: starting $minio on $endpoint (log: $dir/server.log)" >&2
mkdir -p "$dir/data"
MINIO_ROOT_USER="$user" MINIO_ROOT_PASSWORD="$password" MINIO_BROWSER=off \
  setsid nohup "$minio" server "$dir/data" --address "127.0.0.1:$port" \
  >"$dir/server.log" 2>&1 </dev/null 9>&- &
pid=$!
echo "$pid" >"$dir/server.pid"

for _ in $(seq $((START_WAIT_S * 4))); do
  if live "$endpoint"; then
    print_env "$endpoint" "$user" "$password"
    exit 0
  fi
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.25
done
if kill -0 "$pid" 2>/dev/null; then
  echo "ensure-minio: MinIO (pid $pid) did not answer on $endpoint/minio/health/live within ${START_WAIT_S}s" >&2
else
  echo "ensure-minio: MinIO exited before answering on $endpoint" >&2
fi
echo "last lines of $dir/server.log:" >&2
tail -n 30 "$dir/server.log" >&2
exit 1
