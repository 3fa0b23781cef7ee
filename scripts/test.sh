#!/usr/bin/env bash
# The whole test suite on a fresh machine: installs dependencies, starts the servers the tests
# need (PostgreSQL), typechecks, then runs the unit, integration and end-to-end tiers.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
export DATABASE_URL="$(bash infra/dev/ensure-postgres.sh)"
echo "PostgreSQL for tests: $DATABASE_URL"

npx tsc -p tsconfig.json --noEmit
echo "typecheck: ok"

results="$(mktemp -d)"
status=0
for tier in unit int e2e; do
  echo "=== $tier tests ==="
  npx jest --selectProjects "$tier" --runInBand --json --outputFile "$results/$tier.json" || status=1
done
node scripts/summarize-jest.js "$results"/*.json
exit $status
