#!/usr/bin/env bash
# `npm run bench:distributed`: starts the servers the distributed mode needs (as npm test does),
# then runs bench/distributed.ts, which starts the services as separate processes (their compiled
# dist/ build, made here first when stale, as `npm run start:<service>` does) and measures them.
# `npm run bench:distributed -- schedules` runs benchmark 14 of the distributed mode instead
# (bench/distributed-schedules.ts).
set -euo pipefail
cd "$(dirname "$0")/.."
node scripts/bundle-workflows.js
servers_env="$(bash infra/dev/ensure-test-servers.sh)"
set -a; eval "$servers_env"; set +a
bench=bench/distributed.ts
[ "${1:-}" = schedules ] && bench=bench/distributed-schedules.ts
exec node -r ts-node/register/transpile-only -r tsconfig-paths/register "$bench"
