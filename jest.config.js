// Three tiers by file suffix (see docs/contributing.md "Tests"): unit specs are pure, int specs talk to real
// servers (PostgreSQL), e2e specs drive the whole service over real HTTP.
const { pathsToModuleNameMapper } = require('ts-jest');
const { compilerOptions } = require('./tsconfig.json');

const shared = {
  preset: 'ts-jest',
  testEnvironment: 'node',
  rootDir: __dirname,
  moduleNameMapper: pathsToModuleNameMapper(compilerOptions.paths, { prefix: '<rootDir>/' }),
  // Type errors are caught once by `npm run typecheck`; transpiling per file (tsconfig.json's isolatedModules,
  // as SWC does for the build) keeps jest fast.
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.json', diagnostics: false }] },
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  // dist/ is the compiled build (scripts/build-services.js), holding a copy of package.json.
  modulePathIgnorePatterns: ['<rootDir>/dist/'],
};

const slowTier = { setupFilesAfterEnv: ['<rootDir>/test/support/slow-tier-timeout.ts'] };

module.exports = {
  projects: [
    { ...shared, displayName: 'unit', testMatch: ['<rootDir>/{libs,services,test}/**/*.spec.ts'] },
    { ...shared, ...slowTier, displayName: 'int', testMatch: ['<rootDir>/{libs,services}/**/*.int-spec.ts'] },
    // Needs an EventStoreDB server at ESDB_URL; scripts/test.sh runs it only when one is set.
    { ...shared, ...slowTier, displayName: 'int-esdb', testMatch: ['<rootDir>/libs/**/*.server-spec.ts'] },
    { ...shared, ...slowTier, displayName: 'e2e', testMatch: ['<rootDir>/{libs,services,test}/**/*.e2e-spec.ts'] },
    // The same end-to-end suites, run against a distributed deployment (one process per service
    // instance over PostgreSQL, NATS, Temporal and MinIO). Suites that reach into the all-in-one
    // process (its Nest app, its DATA_DIR) stay out.
    {
      ...shared,
      ...slowTier,
      displayName: 'e2e-distributed',
      setupFilesAfterEnv: ['<rootDir>/test/support/slow-tier-timeout.ts', '<rootDir>/test/support/distributed-e2e-mode.ts'],
      testMatch: [
        '<rootDir>/services/api/test/{task-lifecycle,approvals,anthropic-provider,cost,auth-and-errors,hostile-input,uploads,secrets,stream,webhooks,fork,schedules,follow-ups-while-running}.e2e-spec.ts',
        '<rootDir>/services/sandbox/test/{shell-and-artifacts,sandbox-escape,task-bounds,egress,expiry-and-restore,secret-canary,web-tools,mcp-tools,time-travel}.e2e-spec.ts',
        '<rootDir>/test/client/*.e2e-spec.ts',
      ],
    },
  ],
};
