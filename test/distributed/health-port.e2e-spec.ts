import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compiledEntry } from '../support/compiled-entry';
import type { ServiceProcess } from '../support/service-process';
import { freePort, startEntryProcess } from '../support/service-process';

// Two worker processes given the same HEALTH_PORT (a copy-pasted unit file): the second must say
// so in one line and exit, not die on an unhandled EADDRINUSE stack. Each worker runs with the
// all-in-one defaults (in-process bus, embedded store): no server is needed.

jest.setTimeout(180_000);

const ENTRY = 'services/artifacts/src/main.ts';

describe('HEALTH_PORT taken by another worker process', () => {
  let root: string;
  let first: ServiceProcess;
  let port: number;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'ats-health-port-'));
    port = await freePort();
    first = await startEntryProcess(
      ENTRY,
      { DATA_DIR: join(root, 'first'), HEALTH_PORT: String(port) },
      { healthUrl: `http://127.0.0.1:${port}` },
    );
  });
  afterAll(async () => {
    await first?.stop();
    await rm(root, { recursive: true, force: true });
  });

  it('makes the second exit 1 with one line naming HEALTH_PORT and the port, and leaves the first serving', async () => {
    const child = spawn(process.execPath, [compiledEntry(ENTRY)], {
      env: { PATH: process.env.PATH, DATA_DIR: join(root, 'second'), HEALTH_PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect({ code, stderr }).toEqual({
      code: 1,
      stderr: expect.stringMatching(new RegExp(`^HEALTH_PORT ${port} is already in use on 127\\.0\\.0\\.1: [^\\n]*\\n$`)),
    });
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
  });
});
