// The layering the folder tree promises, checked on resolved imports (docs/contributing.md "Style").
// dependency-cruiser follows the tsconfig path aliases (@app/*) to real files and, with
// tsPreCompilationDeps, counts type-only imports too; `npx depcruise --config .dependency-cruiser.js
// services libs test bench scripts` runs it (scripts/test.sh does), test/architecture/layering.spec.ts proves
// each rule fires.

// Test code: specs of every tier, testing/ helpers, services' test/ folders, the repo-level test/.
// It is held more loosely: it may reach across services and use devDependencies, and the domain and
// workflow rules look at production files only. Cycles, libs importing services, orphans and
// unresolvable imports are refused in tests too.
const TEST = ['\\.(spec|int-spec|e2e-spec|server-spec)\\.ts$', '/testing/', '^services/[^/]+/test/', '^test/'];

// The lib tiers, lowest first (docs/architecture.md): a tier may import its own and lower tiers only.
// - domain: pure types and rules every other tier speaks (the task domain, wire contracts, shared errors,
//   config and logging, the workflow code Temporal bundles);
// - ports: the interfaces an adapter implements (`<lib>/src/<name>.port.ts`);
// - adapters: one folder per technology under a lib that owns a port (sql/ is the code the PostgreSQL and
//   SQLite event stores share);
// - runtime: libs/runtime, the composition the services start from.
// The libs in between (read models, task commands, webhooks, metrics, tracing) program against ports.
const DOMAIN = '^libs/(task-domain|contracts|common|workflows)/src/';
const PORTS = '^libs/[^/]+/src/[^/]+\\.port\\.ts$';
const ADAPTERS =
  '^libs/[^/]+/src/(nats|postgres|minio|temporal|embedded|esdb|sql|in-process|in-memory|local|openai-compatible|brave|searxng|tavily)/';
const RUNTIME = '^libs/runtime/src/';

// Where adapters are chosen: each lib's `<lib>.config.ts` picks one from the environment (createEventStore,
// createBus...), and the composition roots call those factories or build an adapter themselves: the
// services' main.ts and Nest modules, the all-in-one services/standalone, libs/runtime, and the test,
// benchmark and script support that builds a store on purpose. An adapter's own lib may share code
// between its adapter folders (postgres/ and embedded/ both use sql/).
const COMPOSITION_ROOTS = [
  '^services/[^/]+/src/main\\.ts$',
  '\\.module\\.ts$',
  '^services/standalone/',
  RUNTIME,
  '^libs/[^/]+/src/[^/]+\\.config\\.ts$',
  '^bench/',
  '^scripts/',
];

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
        'libs/cli (the `ats` command) is a client of the service like any other, and a package of its own (libs/cli/package.json) ' +
        'that runs from its sources: it reaches the service only through the typed client (libs/client) and uses its own ' +
        'files, Node built-ins and the packages its package.json declares. Any other file of the repository (a service, ' +
        'another lib, the root package.json, scripts/) would not be in the installed package, or would drag server-side code ' +
        'and its packages into it.',
      severity: 'error',
      from: { path: '^libs/cli/', pathNot: TEST },
      to: { pathNot: ['^libs/cli/', '^libs/client/src/', '(^|/)node_modules/'], dependencyTypesNot: ['core'] },
    },
    {
      name: 'tier-domain-is-lowest',
      comment:
        'Domain code (task domain, contracts, common, workflows) is the lowest tier: it imports no port, adapter, runtime or ' +
        'other lib above it, so every tier can use it without dragging infrastructure along.',
      severity: 'error',
      from: { path: DOMAIN, pathNot: TEST },
      to: { path: '^libs/', pathNot: DOMAIN },
    },
    {
      name: 'tier-port-above-domain-only',
      comment: 'A port is an interface over domain types: it imports the domain and other ports, never an adapter or the runtime.',
      severity: 'error',
      from: { path: PORTS, pathNot: TEST },
      to: { path: '^libs/', pathNot: [DOMAIN, PORTS] },
    },
    {
      name: 'tier-adapter-below-runtime',
      comment: 'An adapter implements a port; the runtime composes adapters. An adapter importing the runtime would invert that.',
      severity: 'error',
      from: { path: ADAPTERS, pathNot: TEST },
      to: { path: RUNTIME },
    },
    {
      name: 'tier-runtime-is-top',
      comment:
        'libs/runtime is the top lib tier: only services (and tests) import it; a lib below it importing it makes a loop in the tiers.',
      severity: 'error',
      from: { path: '^libs/', pathNot: [RUNTIME, ...TEST] },
      to: { path: RUNTIME },
    },
    {
      name: 'adapter-only-from-composition-root',
      comment:
        "Code programs against a port; which adapter runs is chosen in one place (a lib's <lib>.config.ts factory, a " +
        "service's main.ts or module, standalone, libs/runtime, test/bench/script support). An adapter imported anywhere " +
        'else would fix the technology where the config should choose it. A lib barrel (index.ts) exports no adapter.',
      severity: 'error',
      from: { pathNot: [...COMPOSITION_ROOTS, ...TEST, ADAPTERS] },
      to: { path: ADAPTERS },
    },
    {
      name: 'adapter-shares-only-within-its-lib',
      comment: "An adapter folder may use another adapter folder of its own lib (postgres/ -> sql/), never another lib's adapter.",
      severity: 'error',
      from: { path: '^libs/([^/]+)/src/', pathNot: TEST },
      to: { path: ADAPTERS, pathNot: ['^libs/$1/src/'] },
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
        pathNot: [
          '\\.d\\.ts$',
          '^test/support/(slow-tier-timeout|distributed-e2e-mode)\\.ts$',
          '^bench/lib/exit-on-sigterm\\.js$',
          '^scripts/print-(memory-on-signal|loaded-otel-modules)\\.js$',
        ],
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
      name: 'no-non-package-json',
      comment:
        'A package that is imported must be declared in package.json; one that is only there because another package pulls it ' +
        'in can vanish or change major version on the next install of that package.',
      severity: 'error',
      from: {},
      to: { dependencyTypes: ['npm-no-pkg', 'npm-unknown'] },
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
      comment: 'Production code never imports specs or testing/ helpers: they are left out of the build (scripts/build-services.js).',
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
    // A require of a computed name stays invisible.
    exoticRequireStrings: ['require.resolve', 'nodeRequire'],
    // Packages' `exports` maps, so a subpath import (dependency-cruiser/config-utl/...) resolves like Node does.
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
  },
};
