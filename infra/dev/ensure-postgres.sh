#!/usr/bin/env bash
# Makes sure a PostgreSQL server with trust auth answers for the tests, and prints the URL to use.
# 1. DATABASE_URL (or 127.0.0.1:5432, user postgres) already answers: use it.
# 2. Otherwise install Debian's postgresql if missing and run a private, throw-away cluster on
#    127.0.0.1:${ATS_PG_PORT:-55432} (trust auth, data under /var/tmp), idempotently.
set -euo pipefail

url="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
if command -v psql >/dev/null && psql "$url" -Atqc 'select 1' >/dev/null 2>&1; then
  echo "$url"
  exit 0
fi

port="${ATS_PG_PORT:-55432}"
dir="/var/tmp/ats-postgres-$port"
private="postgres://postgres@127.0.0.1:$port/postgres"
if psql "$private" -Atqc 'select 1' >/dev/null 2>&1; then
  echo "$private"
  exit 0
fi

if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  echo "installing postgresql (Debian package)..." >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2 && apt-get install -y -qq postgresql >&2
fi
bin="$(dirname "$(ls -d /usr/lib/postgresql/*/bin/initdb | sort -V | tail -n 1)")"
as_pg=(runuser -u postgres --)
[ "$(id -u)" = 0 ] || as_pg=()

if [ ! -f "$dir/PG_VERSION" ]; then
  mkdir -p "$dir" && { [ "$(id -u)" != 0 ] || chown postgres:postgres "$dir"; }
  "${as_pg[@]}" "$bin/initdb" -D "$dir" -A trust -U postgres >/dev/null
fi
"${as_pg[@]}" "$bin/pg_ctl" -D "$dir" -l "$dir/server.log" -w \
  -o "-p $port -c listen_addresses=127.0.0.1 -k $dir -c fsync=off" start >/dev/null
echo "$private"
