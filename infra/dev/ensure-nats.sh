#!/usr/bin/env bash
# Makes sure a NATS server with JetStream answers for the tests, and prints its URL.
# 1. NATS_URL (or nats://127.0.0.1:4222) already answers: use it.
# 2. Otherwise install Debian's nats-server if missing and run a private one on
#    127.0.0.1:${ATS_NATS_PORT:-54222} (JetStream on, state under /var/tmp), idempotently.
set -euo pipefail

answers() { # host port: a NATS server greets with INFO
  timeout 2 bash -c "exec 3<>/dev/tcp/$1/$2 && head -c 4 <&3" 2>/dev/null | grep -q INFO
}
hostport() { local rest="${1#nats://}"; echo "${rest%%/*}"; }

url="${NATS_URL:-nats://127.0.0.1:4222}"
hp="$(hostport "$url")"
if answers "${hp%:*}" "${hp##*:}"; then
  echo "$url"
  exit 0
fi

port="${ATS_NATS_PORT:-54222}"
private="nats://127.0.0.1:$port"
dir="/var/tmp/ats-nats-$port"
if answers 127.0.0.1 "$port"; then
  echo "$private"
  exit 0
fi
if ! command -v nats-server >/dev/null; then
  echo "installing nats-server (Debian package)..." >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq nats-server >&2 || { apt-get update -qq >&2 && apt-get install -y -qq nats-server >&2; }
fi
mkdir -p "$dir"
setsid nohup nats-server -a 127.0.0.1 -p "$port" -js -sd "$dir/jetstream" >"$dir/server.log" 2>&1 < /dev/null &
for _ in $(seq 1 100); do
  if answers 127.0.0.1 "$port"; then
    echo "$private"
    exit 0
  fi
  sleep 0.1
done
echo "nats-server did not start on $port; its log:" >&2
tail -n 30 "$dir/server.log" >&2
exit 1
