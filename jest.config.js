// Three tiers by file suffix (see README "Tests"): unit specs are pure, int specs talk to real
// servers (PostgreSQL), e2e specs drive the whole service over real HTTP.
const { pathsToModuleNameMapper } = require('ts-jest');
const { compilerOptions } = require('./tsconfig.json');

const shared = {
  preset: 'ts-jest',
  testEnvironment: 'node',
  rootDir: __dirname,
  moduleNameMapper: pathsToModuleNameMapper(compilerOptions.paths, { prefix: '<rootDir>/' }),
  // Type errors are caught once by `npm run typecheck`; transpiling per file keeps jest fast.
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.jest.json', diagnostics: false }] },
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
};

module.exports = {
  projects: [
    { ...shared, displayName: 'unit', testMatch: ['<rootDir>/{libs,services,test}/**/*.spec.ts'] },
    { ...shared, displayName: 'int', testMatch: ['<rootDir>/{libs,services}/**/*.int-spec.ts'] },
    { ...shared, displayName: 'e2e', testMatch: ['<rootDir>/{libs,services,test}/**/*.e2e-spec.ts'] },
  ],
};
