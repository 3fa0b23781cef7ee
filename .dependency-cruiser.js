// The layering the folder tree promises, checked on resolved imports (docs/contributing.md "Style").
// dependency-cruiser follows the tsconfig path aliases (@app/*) to real files and, with
// tsPreCompilationDeps, counts type-only imports too; `npx depcruise --config .dependency-cruiser.js
// services libs test bench` runs it (scripts/test.sh does), test/architecture/layering.spec.ts proves
// each rule fires.

// Test code: specs of every tier, testing/ helpers, services' test/ folders, the repo-level test/.
// It is held more loosely: it may reach across services and use devDependencies, and the domain and
// workflow rules look at production files only. Cycles, libs importing services, orphans and
// unresolvable imports are refused in tests too.
const TEST = ['\\.(spec|int-spec|e2e-spec|server-spec)\\.ts$', '/testing/', '^services/[^/]+/test/', '^test/'];

module.exports = {
  forbidden: [
    {
      name: 'no-service-to-service',
      comment:
        "Services talk over the bus (libs/bus, libs/contracts), never through each other's files: each one is deployed on its " +
        'own. services/standalone is the all-in-one composition root that wires every service into one process, so it alone ' +
        'may import them; no service imports it. Test code may reach across (an end-to-end suite drives the whole system).',
      severity: 'error',
      from: { path: '^services/([^/]+)/', pathNot: ['^services/standalone/', ...TEST] },
      to: { path: '^services/', pathNot: '^services/$1/' },
    },
    {
      name: 'no-lib-to-service',
      comment: 'Libraries are the layer services are built on; a library importing a service would tie every user of it to that service.',
      severity: 'error',
      from: { path: '^libs/' },
      to: { path: '^services/' },
    },
    {
      name: 'task-domain-is-pure',
      comment:
        'The task domain (decider, events, state, projections) is pure logic: no Node built-in, no framework, no adapter, ' +
        'checked on everything it reaches, not just what it imports. Its only package is mvdan-sh, a shell parser without ' +
        'I/O that the approval rules read commands with; its only other lib file is the error types of @app/common.',
      severity: 'error',
      from: { path: '^libs/task-domain/src/', pathNot: TEST },
      to: {
        reachable: true,
        pathNot: ['^libs/task-domain/src/', '^libs/common/src/errors/app-error\\.ts$', '(^|/)node_modules/mvdan-sh/'],
      },
    },
    {
      name: 'workflow-is-sandbox-safe',
      comment:
        "libs/workflows is what Temporal bundles into its deterministic workflow sandbox (the runner's WORKFLOWS_PATH): it " +
        'may reach only @temporalio/workflow and its own files. A Node built-in, Nest, or another lib (runner, model ' +
        'provider) would fail the bundle or break replay; a type-only import of another lib is refused too, so the ' +
        "workflow's contract types live here and the runner imports them from here (no runner <-> workflows cycle).",
      severity: 'error',
      from: { path: '^libs/workflows/src/', pathNot: TEST },
      to: { reachable: true, pathNot: ['^libs/workflows/src/', '(^|/)node_modules/@temporalio/workflow/'] },
    },
    {
      name: 'client-is-standalone',
      comment:
        'libs/client is published on its own and runs in browsers too: it may reach only its own files and openapi-fetch ' +
        '(whose types come from openapi-typescript-helpers). Another lib would not be in the package; a Node built-in ' +
        'would not load in a browser. Its types come from docs/openapi.json, never from the service code.',
      severity: 'error',
      from: { path: '^libs/client/src/', pathNot: TEST },
      to: {
        reachable: true,
        pathNot: ['^libs/client/src/', '(^|/)node_modules/openapi-fetch/', '(^|/)node_modules/openapi-typescript-helpers/'],
      },
    },
    {
      name: 'console-uses-only-the-client',
      comment:
        'The web console (services/api/console) runs in browsers and talks to the API over HTTP only, through the typed ' +
        'client: it may reach its own files, libs/client and Preact. Any other lib or service file would drag server ' +
        'code into the bundle. Its Vite config is build tooling, not part of the page.',
      severity: 'error',
      from: { path: '^services/api/console/', pathNot: ['^services/api/console/vite\\.config\\.mjs$', ...TEST] },
      to: {
        reachable: true,
        pathNot: ['^services/api/console/', '^libs/client/src/', '(^|/)node_modules/(preact|openapi-fetch|openapi-typescript-helpers)/'],
      },
    },
    {
      name: 'cli-is-a-client',
      comment:
        'libs/cli (the `ats` command) is a client of the service like any other: it reaches the service only through the typed ' +
        'client (libs/client) and uses its own files and packages. Importing a service or another lib would make it depend ' +
        'on code that runs on the server side, and ship it.',
      severity: 'error',
      from: { path: '^libs/cli/', pathNot: TEST },
      to: { path: '^(libs|services)/', pathNot: ['^libs/cli/', '^libs/client/src/'] },
    },
    {
      name: 'no-circular',
      comment: 'A cycle makes load order matter and the two ends one unit in all but name; type-only cycles count too.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-orphans',
      comment:
        'A file nothing imports and that imports nothing is dead code, or an entry point a tool loads by name: those are ' +
        'listed here (ambient .d.ts declarations, jest setup files, the preload benchmarks start node with).',
      severity: 'error',
      from: {
        orphan: true,
        pathNot: ['\\.d\\.ts$', '^test/support/(slow-tier-timeout|distributed-e2e-mode)\\.ts$', '^bench/lib/exit-on-sigterm\\.js$'],
      },
      to: {},
    },
    {
      name: 'not-to-unresolvable',
      comment: 'An import the resolver cannot find (a mistyped alias, a missing package) would hide from every rule above.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: 'not-to-dev-dep',
      comment: 'Production code runs where only `dependencies` are installed; devDependencies are for tests and tooling.',
      severity: 'error',
      from: { path: '^(services|libs)/[^/]+/src/', pathNot: TEST },
      to: { dependencyTypes: ['npm-dev'] },
    },
    {
      name: 'not-to-test',
      comment: 'Production code never imports specs or testing/ helpers: they are left out of the build (tsconfig.app.json).',
      severity: 'error',
      from: { path: '^(services|libs)/[^/]+/src/', pathNot: TEST },
      to: { path: TEST },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // The fixtures break each rule on purpose (layering.spec.ts cruises them on their own).
    // The console's build output (git-ignored) is bundled code, not a source.
    exclude: { path: ['^test/architecture/fixtures/', '^services/api/console/dist/'] },
    tsConfig: { fileName: 'tsconfig.json' },
    // Type-only imports count: a cycle or a reach through types is still a dependency of the source.
    tsPreCompilationDeps: true,
    // Calls that load a module by a literal name without import: require.resolve('...') (the runner hands the
    // workflow file to Temporal's bundler that way) and the embedded event store's nodeRequire (createRequire).
    // A require of a computed name (multipart-stall.ts's require(busboy)) stays invisible.
    exoticRequireStrings: ['require.resolve', 'nodeRequire'],
    // Packages' `exports` maps, so a subpath import (dependency-cruiser/config-utl/...) resolves like Node does.
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
  },
};
