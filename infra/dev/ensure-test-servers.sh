#!/usr/bin/env bash
# Starts (or finds) every server the tests and the distributed benchmarks need, installing what is
# missing (bubblewrap and the sandbox's host tools, chromium for the console's browser tests, tmux for the CLI tests, PostgreSQL, NATS, a Temporal dev server, MinIO), and prints what to set as
# KEY=value lines on stdout (progress goes to stderr):
#   servers_env="$(bash infra/dev/ensure-test-servers.sh)"; set -a; eval "$servers_env"; set +a
# Each ensure-*.sh is idempotent; each assignment on its own line keeps a failure fatal.
set -euo pipefail
cd "$(dirname "$0")"
bash ensure-bubblewrap.sh >&2
bash ensure-sandbox-tools.sh >&2
bash ensure-chromium.sh >&2
bash ensure-tmux.sh >&2
database_url="$(bash ensure-postgres.sh)"
nats_url="$(bash ensure-nats.sh)"
temporal_address="$(bash ensure-temporal.sh)"
minio_env="$(bash ensure-minio.sh)"
printf 'DATABASE_URL=%s\nNATS_URL=%s\nTEMPORAL_ADDRESS=%s\n%s\n' "$database_url" "$nats_url" "$temporal_address" "$minio_env"
