#!/usr/bin/env bash
# Makes sure a Temporal dev server answers for the tests, and prints the address to use.
# 1. 127.0.0.1:${ATS_TEMPORAL_PORT:-57233} already answers: use it.
# 2. Otherwise find the `temporal` CLI (PATH, then "$(go env GOPATH)/bin"), building it with
#    `go install` if missing (pinned: later tags of temporalio/cli no longer build that way), and
#    run `temporal server start-dev` on that port in the background, its state under /var/tmp,
#    idempotently. Everything that downloads happens here, never while the tests run.
set -euo pipefail

port="${ATS_TEMPORAL_PORT:-57233}"
address="127.0.0.1:$port"
dir="/var/tmp/ats-temporal-$port"
cli_module="github.com/temporalio/cli/cmd/temporal"
cli_version="v1.5.1"

find_cli() {
  if command -v temporal >/dev/null; then
    command -v temporal
  elif command -v go >/dev/null && [ -x "$(go env GOPATH)/bin/temporal" ]; then
    echo "$(go env GOPATH)/bin/temporal"
  else
    return 1
  fi
}

healthy() {
  "$cli" operator cluster health --address "$address" --command-timeout 3s >/dev/null 2>&1
}

mkdir -p "$dir"
# One caller at a time builds or starts; the others wait here, then find the server answering.
exec 9>"$dir/ensure.lock"
flock -w 1800 9 || { echo "timed out waiting for $dir/ensure.lock" >&2; exit 1; }

cli="$(find_cli)" || cli=""
if [ -z "$cli" ]; then
  # A build started elsewhere (by hand, another checkout) would race ours for the same output.
  for _ in $(seq 1 1800); do
    pgrep -f "go install $cli_module@" >/dev/null || break
    [ "${waited:-}" ] || { echo "waiting for a running 'go install $cli_module' to finish..." >&2; waited=1; }
    sleep 1
  done
  cli="$(find_cli)" || cli=""
fi
if [ -z "$cli" ]; then
  command -v go >/dev/null || { echo "the temporal CLI is missing and there is no Go toolchain to build it" >&2; exit 1; }
  echo "building the temporal CLI ($cli_module@$cli_version, a few minutes)..." >&2
  go install "$cli_module@$cli_version" >&2
  cli="$(find_cli)"
fi

if healthy; then
  echo "$address"
  exit 0
fi

if [ -f "$dir/server.pid" ] && kill -0 "$(cat "$dir/server.pid")" 2>/dev/null; then
  echo "temporal dev server (pid $(cat "$dir/server.pid")) is still starting..." >&2
else
  # --headless: no web UI; the HTTP API and metrics take random free ports.
  setsid nohup "$cli" server start-dev --headless --ip 127.0.0.1 --port "$port" \
    --db-filename "$dir/temporal.db" --log-level warn \
    >"$dir/server.log" 2>&1 </dev/null 9>&- &
  echo $! >"$dir/server.pid"
fi

for _ in $(seq 1 120); do
  if healthy; then
    echo "$address"
    exit 0
  fi
  if ! kill -0 "$(cat "$dir/server.pid")" 2>/dev/null; then
    echo "temporal dev server exited; its log ($dir/server.log) ends with:" >&2
    tail -n 20 "$dir/server.log" >&2
    exit 1
  fi
  sleep 0.5
done
echo "temporal dev server did not answer on $address within 60 s; see $dir/server.log" >&2
exit 1
