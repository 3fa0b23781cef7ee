import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

// The layering the folder tree promises (docs/contributing.md "Style") is checked by dependency-cruiser on
// resolved imports, with the rules in .dependency-cruiser.js; scripts/test.sh runs it too. Here:
// each rule catches what it should, on fixture trees under fixtures/ that break it on purpose (one
// folder each, laid out like the repo), and the real tree breaks none.

const ROOT = join(__dirname, '..', '..');
const FIXTURES = [
  'service-to-service',
  'lib-to-service',
  'domain-node-fs',
  'cycle',
  'workflow-node-builtin',
  'client-reaches-out',
  'console-reaches-out',
  'cli-reaches-out',
  'lib-tiers',
  'adapter-outside-root',
  'allowed',
];
const CRUISE_TIMEOUT_MS = 180_000;

interface Violation {
  readonly rule: string;
  readonly from: string;
  readonly to: string;
}

interface CruiseResult {
  readonly modules: number;
  readonly violations: Violation[];
}

/** One child process cruises every tree: loading dependency-cruiser and TypeScript takes seconds. */
async function cruise(baseDirs: string[]): Promise<CruiseResult[]> {
  const script = join(__dirname, 'cruise.mjs');
  const { stdout } = await promisify(execFile)(process.execPath, [script, ...baseDirs], { maxBuffer: 64 * 1024 * 1024 });
  return JSON.parse(stdout);
}

let realTree: CruiseResult;
const fixtures = new Map<string, CruiseResult>();

beforeAll(async () => {
  const [root, ...results] = await cruise([ROOT, ...FIXTURES.map((name) => join(__dirname, 'fixtures', name))]);
  realTree = root;
  FIXTURES.forEach((name, i) => fixtures.set(name, results[i]));
}, CRUISE_TIMEOUT_MS);

function fixture(name: string): { rules: string[]; violations: Violation[] } {
  const { modules, violations } = fixtures.get(name)!;
  if (modules === 0) throw new Error(`fixture ${name} has no files: the check would prove nothing`);
  return { rules: [...new Set(violations.map((v) => v.rule))].sort(), violations };
}

const edge = (from: string, to: string) => expect.objectContaining({ from, to });

describe('dependency rules', () => {
  it('refuse a service importing another service', () => {
    const { rules, violations } = fixture('service-to-service');
    expect(rules).toEqual(['no-service-to-service']);
    expect(violations).toEqual([edge('services/api/src/tasks.controller.ts', 'services/orchestrator/src/agent-runner.ts')]);
  });

  it('refuse a library importing a service', () => {
    expect(fixture('lib-to-service').rules).toEqual(['no-lib-to-service']);
  });

  it('refuse a task-domain file reaching a Node built-in, directly or through another lib', () => {
    const { rules, violations } = fixture('domain-node-fs');
    expect(rules).toEqual(['task-domain-is-pure']);
    expect(violations).toEqual(
      expect.arrayContaining([
        edge('libs/task-domain/src/snapshot.ts', 'fs'),
        // through libs/common's index, which re-exports a module using node:crypto
        edge('libs/task-domain/src/task.decider.ts', 'crypto'),
      ]),
    );
  });

  it('refuse a cycle, even when one side imports a type only', () => {
    expect(fixture('cycle').rules).toEqual(['no-circular']);
  });

  it('refuse workflow code reaching a Node built-in or another lib (a type-only import included)', () => {
    const { rules, violations } = fixture('workflow-node-builtin');
    // A port of another lib is above the domain tier too.
    expect(rules).toEqual(['tier-domain-is-lowest', 'workflow-is-sandbox-safe']);
    expect(violations).toEqual(
      expect.arrayContaining([
        edge('libs/workflows/src/agent.workflow.ts', 'crypto'),
        edge('libs/workflows/src/agent.workflow.ts', 'libs/runner/src/runner.port.ts'),
      ]),
    );
  });

  it('refuse the published client reaching another lib or a Node built-in', () => {
    const { rules, violations } = fixture('client-reaches-out');
    expect(rules).toEqual(['client-is-standalone']);
    expect(violations).toEqual(
      expect.arrayContaining([edge('libs/client/src/client.ts', 'fs'), edge('libs/client/src/client.ts', 'libs/common/src/ids.ts')]),
    );
  });

  it('refuse the web console reaching server code or a lib other than the client', () => {
    const { rules, violations } = fixture('console-reaches-out');
    expect(rules).toEqual(['console-uses-only-the-client']);
    expect(violations).toEqual(
      expect.arrayContaining([
        edge('services/api/console/src/app.ts', 'services/api/src/api.config.ts'),
        edge('services/api/console/src/app.ts', 'libs/common/src/ids.ts'),
      ]),
    );
  });

  it('refuse the CLI reaching any file of the repository but its own and the typed client', () => {
    const { rules, violations } = fixture('cli-reaches-out');
    expect(rules).toEqual(['cli-is-a-client', 'no-lib-to-service']);
    expect(violations).toEqual([
      edge('libs/cli/src/show.ts', 'libs/common/src/ids.ts'),
      edge('libs/cli/src/show.ts', 'scripts/version.ts'),
      edge('libs/cli/src/show.ts', 'services/api/src/tasks.controller.ts'),
      edge('libs/cli/src/show.ts', 'services/api/src/tasks.controller.ts'),
    ]);
  });

  it('refuse a lib tier importing a higher one (domain → ports → adapters → runtime)', () => {
    const { rules, violations } = fixture('lib-tiers');
    expect(rules).toEqual(['tier-adapter-below-runtime', 'tier-domain-is-lowest', 'tier-port-above-domain-only', 'tier-runtime-is-top']);
    expect(violations).toEqual(
      expect.arrayContaining([
        edge('libs/contracts/src/messages.ts', 'libs/bus/src/bus.port.ts'),
        edge('libs/bus/src/bus.port.ts', 'libs/metrics/src/counter.ts'),
        edge('libs/bus/src/nats/nats-bus.ts', 'libs/runtime/src/runtime.tokens.ts'),
        edge('libs/webhooks/src/outbox.ts', 'libs/runtime/src/runtime.tokens.ts'),
      ]),
    );
  });

  it("refuse an adapter imported outside a composition root: a service's handler, a lib barrel, another lib's adapter", () => {
    const { rules, violations } = fixture('adapter-outside-root');
    expect(rules).toEqual(['adapter-only-from-composition-root', 'adapter-shares-only-within-its-lib']);
    expect(violations).toEqual(
      expect.arrayContaining([
        edge('services/api/src/tasks/tasks.handler.ts', 'libs/event-store/src/embedded/embedded-event-store.ts'),
        edge('libs/event-store/src/index.ts', 'libs/event-store/src/embedded/embedded-event-store.ts'),
        edge('libs/coordination/src/nats/nats-lock-store.ts', 'libs/event-store/src/embedded/embedded-event-store.ts'),
      ]),
    );
  });

  it('allow the composition root, tests reaching across services, @temporalio/workflow and the pure domain', () => {
    expect(fixture('allowed').violations).toEqual([]);
  });

  it('hold on the real tree', () => {
    expect(realTree.modules).toBeGreaterThan(100);
    expect(realTree.violations).toEqual([]);
  });
});
