#!/usr/bin/env bash
# The whole test suite on a fresh machine: installs dependencies, starts the servers the tests
# need (PostgreSQL, NATS, MinIO, a Temporal dev server; bubblewrap for the sandbox; chromium for the console), typechecks,
# checks the dependency rules (.dependency-cruiser.js), lint (ESLint) and format (Prettier), then
# runs the unit, integration and end-to-end tiers, and the end-to-end suites again against a
# distributed deployment (e2e-distributed).
# The assignment on its own line keeps a failure of ensure-test-servers.sh fatal.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  # Its postinstall applies patches/ (docs/contributing.md "Patched dependencies"); never --ignore-scripts.
  npm ci --no-audit --no-fund
elif [ -n "$(find patches -newer node_modules/.package-lock.json -print -quit)" ]; then
  # A patch added or changed since that install: apply it (patch-package skips one already applied).
  npx patch-package
fi
# The static checks come first: each takes seconds, and any finding stops the run before a server starts.
npx tsc -p tsconfig.json --noEmit
echo "typecheck: ok"
# The published client on its own: no path alias, no Node types (it runs in browsers too).
npx tsc -p libs/client/tsconfig.json --noEmit
echo "client package typecheck: ok"
# The web console on its own: browser types and Preact's JSX (services/api/console/tsconfig.json).
npx tsc -p services/api/console/tsconfig.json
echo "console typecheck: ok"
# The layering rules (.dependency-cruiser.js) on resolved imports.
npx depcruise --config .dependency-cruiser.js services libs test bench scripts
echo "dependency rules: ok"
npx eslint .
echo "lint: ok"
# `npm run format` fixes what this finds.
npx prettier --check --log-level warn "**/*.{ts,tsx,js,mjs,json,css}"
echo "format: ok"
# docs/openapi.json against Redocly's recommended rules (redocly.yaml; telemetry off there, no update check here).
REDOCLY_SUPPRESS_UPDATE_NOTICE=true npx redocly lint docs/openapi.json
echo "openapi lint: ok"

# The console's build (rebuilt when stale), which the API serves and the browser tests load.
node scripts/build-console.js
# The services' compiled build (dist/, rebuilt when stale), which the tests that start the service
# as a process run, as `npm start` does, and the Temporal workflow bundle the orchestrator loads.
node scripts/bundle-workflows.js

servers_env="$(bash infra/dev/ensure-test-servers.sh)"
set -a; eval "$servers_env"; set +a
echo "servers for tests: PostgreSQL $DATABASE_URL, NATS $NATS_URL, Temporal $TEMPORAL_ADDRESS, MinIO $MINIO_ENDPOINT"

results="$(mktemp -d)"
status=0
tiers=(unit int e2e e2e-distributed)
not_run=()
if [ -n "${ESDB_URL:-}" ]; then
  tiers+=(int-esdb)
else
  echo "EventStoreDB suite (int-esdb): NOT RUN, ESDB_URL is unset (no EventStoreDB server can run on our CI machines)"
  not_run+=(--not-run "int-esdb (ESDB_URL unset)")
fi
for tier in "${tiers[@]}"; do
  echo "=== $tier tests ==="
  npx jest --selectProjects "$tier" --runInBand --json --outputFile "$results/$tier.json" || status=1
done
# Every expected tier's file by name, so a tier that wrote none shows as crashed instead of vanishing.
result_files=()
for tier in "${tiers[@]}"; do result_files+=("$results/$tier.json"); done
node scripts/summarize-jest.js "${not_run[@]}" "${result_files[@]}"
exit $status
