import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createBus } from '@app/bus';
import { SUBJECTS } from '@app/contracts';
import type { PrivateNatsServer } from '@app/bus/testing/nats-server';
import { startPrivateNatsServer } from '@app/bus/testing/nats-server';
import type { ScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import { startScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import type { DistributedDeployment, ServiceInstance } from '../support/distributed-deployment';
import { startDistributedDeployment } from '../support/distributed-deployment';
import type { StreamBlock as Block } from '../support/distributed-reads';
import { pollDeployment, readHistory } from '../support/distributed-reads';
import { Scrape } from '../support/prometheus-scrape';
import { workspaceOf } from '../support/workspaces';

// The distributed mode end to end: every service its own OS process (two API instances, two
// orchestrator workers, two sandbox instances, one artifacts instance) over real PostgreSQL,
// NATS, Temporal and MinIO. A task created on one API instance is followed, approved and read on
// the other; workers are killed with SIGKILL mid-task and NATS (a server of the suite's own) is
// restarted, and each task still completes with nothing lost or duplicated.

jest.setTimeout(300_000);

const KEY = 'dist-key';
const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('The distributed deployment (separate processes over NATS, PostgreSQL, Temporal, MinIO)', () => {
  let model: ScriptedOpenAiServer;
  let d: DistributedDeployment;
  let nats: PrivateNatsServer;

  beforeAll(async () => {
    model = await startScriptedOpenAiServer();
    nats = await startPrivateNatsServer();
    d = await startDistributedDeployment(
      { api: 2, orchestrator: 2, sandbox: 2, artifacts: 1 },
      { NATS_URL: nats.url, API_KEYS: KEY, LLM_BASE_URL: model.url, LLM_MODEL: 'scripted', LLM_MAX_RETRIES: '1', TOOL_TIMEOUT_MS: '20000' },
    );
  });
  afterAll(async () => {
    // Every instance's log, for a failure's post-mortem: ATS_DIST_LOG=/tmp/dist-services.log
    if (process.env.ATS_DIST_LOG && d) await writeFile(process.env.ATS_DIST_LOG, d.output());
    await d?.close();
    await model?.close();
    await nats?.dispose();
  });

  const api = async (instance: number, path: string, init: { method?: string; json?: unknown } = {}) => {
    const res = await fetch(`${d.apiUrls[instance]}${path}`, {
      method: init.method ?? 'GET',
      headers,
      body: init.json === undefined ? undefined : JSON.stringify(init.json),
    });
    const text = await res.text();
    let body: any = text;
    try {
      body = JSON.parse(text);
    } catch {
      // raw bytes (downloads)
    }
    return { status: res.status, body, headers: res.headers };
  };
  const until = <T>(what: string, probe: () => Promise<T | undefined>, timeoutMs?: number) => pollDeployment(d, what, probe, timeoutMs);
  const history = (instance: number, id: string, after = 0) => readHistory(d.apiUrls[instance], KEY, id, after);
  const expectGapless = (blocks: Block[], first = 1) => expect(blocks.map((b) => b.id)).toEqual(blocks.map((_, i) => first + i));
  const pendingCall = (instance: number, id: string) =>
    until('a pending approval', async () => {
      const view = (await api(instance, `/api/v1/tasks/${id}`)).body.data;
      return view.pendingApprovals.length === 1 ? (view.pendingApprovals[0].callId as string) : undefined;
    });
  const instancesOf = (service: ServiceInstance['service']) => d.instances.filter((i) => i.service === service);
  /** ats_tool_calls_lost_total over every orchestrator instance. */
  const lostCalls = async () => {
    const scrapes = await Promise.all(instancesOf('orchestrator').map((i) => Scrape.of(`${i.healthUrl}/metrics`)));
    return scrapes.reduce((sum, scrape) => sum + scrape.value('ats_tool_calls_lost_total', 'counter'), 0);
  };
  /**
   * The sandbox instance whose process tree runs a command carrying `marker` (ps's parent links,
   * as pids are host pids). A command is on no command line: its shell's environment holds it.
   */
  const sandboxRunning = async (marker: string): Promise<ServiceInstance | undefined> => {
    const rows = execFileSync('ps', ['-eo', 'pid=,ppid=,args='])
      .toString()
      .split('\n')
      .map((line) => /^\s*(\d+)\s+(\d+)\s(.*)$/.exec(line))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => ({ pid: Number(m[1]), ppid: Number(m[2]), args: m[3] }));
    const parentOf = new Map(rows.map((r) => [r.pid, r.ppid]));
    const byPid = new Map(instancesOf('sandbox').map((i) => [i.process.child.pid, i]));
    const carries = (pid: number) => {
      try {
        return readFileSync(`/proc/${pid}/environ`).includes(marker);
      } catch {
        return false; // gone meanwhile
      }
    };
    for (const row of rows.filter((r) => r.args.includes(marker) || carries(r.pid))) {
      for (let pid: number | undefined = row.pid; pid && pid > 1; pid = parentOf.get(pid)) {
        const instance = byPid.get(pid);
        if (instance) return instance;
      }
    }
    return undefined;
  };

  it('runs a task created on one API instance and streamed from the other: shell in the sandbox, artifacts from MinIO, secrets redacted', async () => {
    model.script(
      {
        toolCalls: [
          {
            name: 'shell',
            arguments: {
              command: 'mkdir -p downloads && echo "token=$TOKEN region=$REGION" > downloads/report.md && cat downloads/report.md',
            },
          },
        ],
      },
      { text: 'Report written.' },
    );
    const created = await api(0, '/api/v1/tasks', {
      method: 'POST',
      json: { message: 'write a report', secrets: { TOKEN: 'canary-secret-4242' }, env: { REGION: 'eu' } },
    });
    expect(created.status).toBe(201);
    const id = created.body.data.id;
    const blocks = await history(1, id);
    expectGapless(blocks);
    expect(blocks.map((b) => b.event)).toEqual([
      'message',
      'status',
      'usage',
      'tool_call',
      'tool_started',
      'tool_result',
      'artifact',
      'usage',
      'content',
      'done',
    ]);
    const result = blocks.find((b) => b.event === 'tool_result')!.data;
    expect(result).toMatchObject({ status: 'success', output: 'token=[REDACTED:TOKEN] region=eu\n' });
    expect(blocks.at(-1)!.data.status).toBe('completed');
    expect(JSON.stringify(blocks)).not.toContain('canary-secret-4242');

    const files = (await api(1, `/api/v1/tasks/${id}/artifacts`)).body.files;
    expect(files.map((f: { path: string }) => f.path)).toEqual(['downloads/report.md']);
    const download = await api(0, `/api/v1/tasks/${id}/artifacts/download?path=downloads/report.md`);
    expect(download.headers.get('content-type')).toMatch(/text\/markdown/);
    // The file itself holds the real value: it is the agent's output, and only the workspace sees it.
    expect(download.body).toBe('token=canary-secret-4242 region=eu\n');
  });

  it('keeps the context for a follow-up sent to the other API instance', async () => {
    model.script({ text: 'First answer.' }, { text: 'Second answer.' });
    const id = (await api(1, '/api/v1/tasks', { method: 'POST', json: { message: 'remember 7' } })).body.data.id;
    await history(1, id);
    expect((await api(0, `/api/v1/tasks/${id}/messages`, { method: 'POST', json: { message: 'what did I say?' } })).status).toBe(201);
    const turn2 = await history(0, id);
    expect(turn2.at(-1)!.data).toMatchObject({ status: 'completed', turn: 2 });
    const lastRequest = model.requests.at(-1)!.messages!.map((m) => m.content);
    expect(lastRequest).toEqual(expect.arrayContaining(['remember 7', 'First answer.', 'what did I say?']));
  });

  it('survives the loss of an orchestrator worker while a call awaits approval', async () => {
    model.script(
      { toolCalls: [{ name: 'write_file', arguments: { path: 'downloads/approved.md', content: 'yes' } }] },
      { text: 'Done after approval.' },
    );
    const id = (await api(0, '/api/v1/tasks', { method: 'POST', json: { message: 'approve me', autoExecute: false } })).body.data.id;
    const callId = await pendingCall(1, id);
    const worker = instancesOf('orchestrator')[0];
    await worker.process.kill9();
    const approved = await api(1, `/api/v1/tasks/${id}/tools/${callId}/approve`, { method: 'POST', json: { outcome: 'proceed_once' } });
    expect(approved.body.data).toEqual({ callId, outcome: 'proceed_once', approved: true });
    const blocks = await history(0, id);
    expectGapless(blocks);
    expect(blocks.filter((b) => b.event === 'tool_started')).toHaveLength(1);
    expect(blocks.find((b) => b.event === 'tool_result')!.data.status).toBe('success');
    expect(blocks.at(-1)!.data.status).toBe('completed');
    await d.restart(worker);
  });

  it('notices a sandbox instance killed mid-command through its lease within 15 s: the call ends as an error, the turn goes on, and a follow-up finds every file of the last completed step', async () => {
    const marker = `lost-call-${Date.now()}-${process.pid}`;
    // Each sandbox instance gets a disk of its own, as instances without a shared workspace volume
    // have: what the survivor finds of the task then comes from the checkpoints in MinIO alone.
    for (const [n, sandbox] of instancesOf('sandbox').entries()) {
      await sandbox.process.stop();
      await d.restart(sandbox, { DATA_DIR: join(d.sandboxVolume, '..', `own-disk-${n}`) });
    }
    // Longer than this suite's TOOL_TIMEOUT_MS (20 s): only the lease can end it in time.
    model.script(
      { toolCalls: [{ name: 'shell', arguments: { command: `mkdir -p kept && echo "${marker}" > kept/file.txt && chmod 700 kept` } }] },
      { toolCalls: [{ name: 'shell', arguments: { command: `echo unrecorded > lost.txt; sleep 60; echo finished # ${marker}` } }] },
      { text: 'Carried on.' },
    );
    const id = (await api(1, '/api/v1/tasks', { method: 'POST', json: { message: 'slow command' } })).body.data.id;
    // The instance that holds the task's sandbox is the one whose processes run the command.
    const holder = await until('the command to run on a sandbox instance', async () => sandboxRunning(marker));
    const survivor = instancesOf('sandbox').find((i) => i !== holder)!;
    const lostBefore = await lostCalls();
    await holder.process.kill9();
    const killedAt = Date.now();
    try {
      const blocks = await history(0, id);
      // SANDBOX_LEASE_TTL_MS is 15 s: two missed renewals (at most 10 s after the kill) and a poll.
      expect(Date.now() - killedAt).toBeLessThanOrEqual(15_000);
      expectGapless(blocks);
      const results = blocks.filter((b) => b.event === 'tool_result');
      expect(results).toHaveLength(2);
      expect(results[0].data.changes).toEqual([{ path: 'kept/file.txt', change: 'created', size: marker.length + 1 }]);
      // The reply died with its instance: the call ends as an error saying why, never as the
      // command's output, and the turn goes on.
      expect(results[1].data).toMatchObject({
        status: 'error',
        output: 'The tool could not be run: the sandbox instance running it was lost (it stopped renewing its hold on the task)',
      });
      expect(blocks.at(-1)!.data.status).toBe('completed');
      expect((await lostCalls()) - lostBefore).toBe(1);
      expect(d.output()).toMatch(
        /sandbox instance \S+ stopped renewing its lease \(last renewed \d+ s ago\): the call running there is lost/,
      );

      // A follow-up's call runs on the surviving instance once the dead holder's lease runs out.
      const followMarker = `follow-up-${Date.now()}-${process.pid}`;
      // On the survivor the workspace comes back from the last checkpoint: the first step's files,
      // not what the killed command wrote after it.
      const followCommand = `sleep 1; cat kept/file.txt; stat -c %a kept; ls lost.txt 2>&1 | grep -c 'No such'; echo followed up # ${followMarker}`;
      model.script({ toolCalls: [{ name: 'shell', arguments: { command: followCommand } }] }, { text: 'Followed up.' });
      const lastId = blocks.at(-1)!.id;
      expect((await api(0, `/api/v1/tasks/${id}/messages`, { method: 'POST', json: { message: 'again' } })).status).toBe(201);
      expect(await until('the follow-up to run', async () => sandboxRunning(followMarker), 60_000)).toBe(survivor);
      const followUp = await history(0, id, lastId);
      expect(followUp.find((b) => b.event === 'tool_result')!.data).toMatchObject({
        status: 'success',
        output: `${marker}\n700\n1\nfollowed up\n`,
      });
      expect(followUp.at(-1)!.data.status).toBe('completed');
    } finally {
      await d.restart(holder);
      await survivor.process.stop();
      await d.restart(survivor);
    }
  });

  it('carries on through a NATS restart: the tool call that could not be delivered runs, once, when NATS is back', async () => {
    model.script(
      { toolCalls: [{ name: 'write_file', arguments: { path: 'downloads/after-restart.md', content: 'ok' } }] },
      { text: 'Done despite NATS.' },
    );
    const id = (await api(0, '/api/v1/tasks', { method: 'POST', json: { message: 'survive NATS', autoExecute: false } })).body.data.id;
    const callId = await pendingCall(1, id);
    await nats.kill();
    // Approvals travel through the event store and Temporal, not NATS; the tool run needs NATS.
    const approved = await api(1, `/api/v1/tasks/${id}/tools/${callId}/approve`, { method: 'POST', json: { outcome: 'proceed_once' } });
    expect(approved.body.data).toEqual({ callId, outcome: 'proceed_once', approved: true });
    const streamed = history(0, id);
    await until('the tool to start while NATS is down', async () =>
      (await api(0, `/api/v1/tasks/${id}`)).body.data.lastEventId >= 6 ? true : undefined,
    );
    await sleep(1_500);
    await nats.start();
    const blocks = await streamed;
    expectGapless(blocks);
    expect(blocks.filter((b) => b.event === 'tool_started')).toHaveLength(1);
    // The output in the comparison, so that a failure says why the call failed.
    const result = blocks.find((b) => b.event === 'tool_result')!.data;
    expect({ status: result.status, output: result.output }).toEqual({ status: 'success', output: expect.any(String) });
    expect(blocks.at(-1)!.data).toMatchObject({ status: 'completed' });
    expect((await api(1, `/api/v1/tasks/${id}/artifacts`)).body.files.map((f: { path: string }) => f.path)).toEqual([
      'downloads/after-restart.md',
    ]);
  });

  it("runs a task's call on one sandbox instance only, once, however often and wherever it is delivered", async () => {
    // Each run appends its start and end to runs.log; two instances running the call at once would interleave.
    const command = 'echo "start $(date +%s%N)" >> runs.log; sleep 2; echo "end $(date +%s%N)" >> runs.log; echo ran';
    model.script({ toolCalls: [{ name: 'shell', arguments: { command } }] }, { text: 'Ran once.' });
    const id = (await api(0, '/api/v1/tasks', { method: 'POST', json: { message: 'run it once', autoExecute: false } })).body.data.id;
    const callId = await pendingCall(1, id);
    expect(
      (await api(1, `/api/v1/tasks/${id}/tools/${callId}/approve`, { method: 'POST', json: { outcome: 'proceed_once' } })).status,
    ).toBe(200);
    await until('the call to start', async () => ((await history(0, id)).some((b) => b.event === 'tool_started') ? true : undefined));
    // The same request again, eight times at once, as resends and duplicate deliveries would: the
    // queue group spreads them over both sandbox instances.
    const bus = await createBus({ kind: 'nats', servers: [nats.url], namespace: d.sharedEnv.NATS_SUBJECT_PREFIX });
    try {
      const request = { taskId: id, callId, toolName: 'shell', args: { command } };
      const replies = await Promise.all(
        Array.from({ length: 8 }, () =>
          bus.request<typeof request, { status: string; output: string }>(SUBJECTS.sandboxExecuteTool, request, { timeoutMs: 30_000 }),
        ),
      );
      for (const reply of replies) expect(reply).toMatchObject({ status: 'success', output: 'ran\n' });
    } finally {
      await bus.close();
    }
    const blocks = await history(0, id);
    expect(blocks.filter((b) => b.event === 'tool_result')).toHaveLength(1);
    const runs = (await readFile(join(workspaceOf(d.sandboxVolume, id), 'runs.log'), 'utf8')).trim().split('\n');
    expect(runs.map((line) => line.split(' ')[0])).toEqual(['start', 'end']);
  });

  it('sends back a tool output too large for one NATS message cut to fit, not as a failed call', async () => {
    // 900 kB of \x01: within SANDBOX_MAX_OUTPUT_BYTES (1 MiB), but six bytes each as JSON.
    model.script(
      { toolCalls: [{ name: 'shell', arguments: { command: "head -c 900000 /dev/zero | tr '\\0' '\\1'" } }] },
      { text: 'Seen.' },
    );
    const id = (await api(0, '/api/v1/tasks', { method: 'POST', json: { message: 'flood the bus' } })).body.data.id;
    const blocks = await history(1, id);
    const result = blocks.find((b) => b.event === 'tool_result')!.data;
    expect(result.status).toBe('success');
    expect(result.output).toMatch(/\[output cut to fit one bus message\]$/);
    expect(result.output.length).toBeGreaterThan(100_000);
    expect(blocks.at(-1)!.data.status).toBe('completed');
  });

  describe('durable secrets: every process opens the task’s envelope with its own SECRETS_KEY', () => {
    const TOKEN = `tok-${randomBytes(6).toString('hex')}-dist`;
    const restartAll = (service: ServiceInstance['service'], override?: Record<string, string>) =>
      Promise.all(
        instancesOf(service).map(async (i) => {
          await i.process.kill9();
          await d.restart(i, override);
        }),
      );

    it('works on orchestrator and sandbox instances that did not exist when the task was created', async () => {
      model.script(
        { toolCalls: [{ name: 'shell', arguments: { command: 'printf %s "$TOKEN" | sha256sum; echo "plain: $TOKEN"' } }] },
        { text: `Done with ${TOKEN}.` },
      );
      const id = (
        await api(0, '/api/v1/tasks', { method: 'POST', json: { message: 'use the token', autoExecute: false, secrets: { TOKEN } } })
      ).body.data.id;
      const callId = await pendingCall(1, id);
      // Every orchestrator and sandbox process that could have seen the task is gone (kill -9).
      await Promise.all([restartAll('orchestrator'), restartAll('sandbox')]);
      await api(1, `/api/v1/tasks/${id}/tools/${callId}/approve`, { method: 'POST', json: { outcome: 'proceed_once' } });
      const blocks = await history(0, id);
      const result = blocks.find((b) => b.event === 'tool_result')!.data;
      expect(result.status).toBe('success');
      expect(result.output).toContain(createHash('sha256').update(TOKEN).digest('hex'));
      expect(result.output).toContain('plain: [REDACTED:TOKEN]');
      expect(blocks.find((b) => b.event === 'content')!.data.text).toBe('Done with [REDACTED:TOKEN].');
      expect(blocks.at(-1)!.data.status).toBe('completed');
      expect(JSON.stringify(blocks)).not.toContain(TOKEN);
    });

    it('a sandbox with a wrong key runs nothing: the turn fails saying the sandbox cannot open them', async () => {
      await restartAll('sandbox', { SECRETS_KEY: randomBytes(32).toString('base64') });
      try {
        const modelCalls = model.requests.length;
        const id = (await api(0, '/api/v1/tasks', { method: 'POST', json: { message: 'use the token', secrets: { TOKEN } } })).body.data.id;
        const blocks = await history(1, id);
        expect(blocks.map((b) => b.event)).toEqual(['message', 'status', 'notice', 'done']);
        const done = blocks.at(-1)!.data;
        expect(done.status).toBe('failed');
        expect(done.error).toMatch(
          /^In the sandbox service: Secrets TOKEN cannot be opened: they were sealed with key id [0-9a-f]{16}, and this process has only key id/,
        );
        expect(blocks[2].data).toMatchObject({ code: 'SECRETS_UNAVAILABLE', names: ['TOKEN'] });
        // Listing the tools failed before the model was asked: no call could even be requested.
        expect(model.requests.length).toBe(modelCalls);
      } finally {
        await restartAll('sandbox');
      }
    });

    it('an API instance without SECRETS_KEY refuses a create with secrets (400) and accepts one without', async () => {
      const [apiInstance] = instancesOf('api').filter((i) => i.index === 1);
      await apiInstance.process.stop();
      await d.restart(apiInstance, { SECRETS_KEY: '' });
      try {
        expect(apiInstance.process.output()).toContain(
          'No SECRETS_KEY or SECRETS_KEY_FILE set: this process can neither seal nor open task secrets',
        );
        const refused = await api(1, '/api/v1/tasks', { method: 'POST', json: { message: 'x', secrets: { TOKEN } } });
        expect(refused.status).toBe(400);
        expect(refused.body.error.code).toBe('VALIDATION_ERROR');
        expect(refused.body.error.message).toMatch(/secrets need SECRETS_KEY/);
        expect(JSON.stringify(refused.body)).not.toContain(TOKEN);
        model.script({ text: 'No secrets, no problem.' });
        const accepted = await api(1, '/api/v1/tasks', { method: 'POST', json: { message: 'x' } });
        expect(accepted.status).toBe(201);
        expect((await history(1, accepted.body.data.id)).at(-1)!.data.status).toBe('completed');
      } finally {
        await apiInstance.process.stop();
        await d.restart(apiInstance);
      }
    });
  });
});
