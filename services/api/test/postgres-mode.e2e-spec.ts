import { Client } from 'pg';
import { randomBytes } from 'node:crypto';
import type { Harness } from '../../../test/support/service-harness';
import { startHarness, waitFor } from '../../../test/support/service-harness';
import { followStream } from '../../../test/support/sse-client';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

// The same service on the PostgreSQL event store (the production adapter we can run here),
// each run in its own schema.
describe('The all-in-one service on the PostgreSQL event store', () => {
  const schema = `e2e_${randomBytes(6).toString('hex')}`;
  let h: Harness;
  beforeAll(async () => (h = await startHarness({ EVENT_STORE: 'postgres', DATABASE_URL, EVENT_STORE_SCHEMA: schema })));
  afterAll(async () => {
    await h.close();
    const client = new Client({ connectionString: DATABASE_URL });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await client.end();
  });

  it('runs a task with a tool call and a follow-up, with every event in the PostgreSQL stream', async () => {
    h.model.script({ toolCalls: [{ name: 'write_file', arguments: { path: 'downloads/pg.csv', content: 'a,b\n' } }] }, { text: 'written' });
    const id = (await h.api('/api/v1/tasks', { method: 'POST', json: { message: 'on postgres' } })).body.data.id;
    const first = await followStream(`${h.url}/api/v1/tasks/${id}/stream`, 'test-key-tenant-a');
    expect(first.at(-1)!.payload.data.status).toBe('completed');

    h.model.script({ text: 'second turn' });
    await h.api(`/api/v1/tasks/${id}/messages`, { method: 'POST', json: { message: 'and again' } });
    const second = await followStream(`${h.url}/api/v1/tasks/${id}/stream`, 'test-key-tenant-a');
    expect(second.map((e) => e.kind)).toEqual(['message', 'status', 'usage', 'content', 'done']);
    expect(second[0].id).toBe(first.at(-1)!.id + 1);

    const client = new Client({ connectionString: DATABASE_URL });
    await client.connect();
    const rows = await client.query(`SELECT revision, type FROM ${schema}.events WHERE stream_id = $1 ORDER BY revision`, [`task-${id}`]);
    await client.end();
    expect(rows.rows.map((r) => Number(r.revision))).toEqual(rows.rows.map((_, i) => i + 1));
    expect(rows.rows).toHaveLength(second.at(-1)!.id);
    expect((await h.api(`/api/v1/tasks/${id}/artifacts`)).body.files[0]).toMatchObject({
      path: 'downloads/pg.csv',
      category: 'csv',
      mimeType: 'text/csv',
    });
  });

  it('waits for approval and resumes after the decision', async () => {
    h.model.script({ toolCalls: [{ name: 'list_files', arguments: {} }] }, { text: 'listed' });
    const id = (await h.api('/api/v1/tasks', { method: 'POST', json: { message: 'ask first', autoExecute: false } })).body.data.id;
    const callId = (await waitFor(async () => (await h.api(`/api/v1/tasks/${id}`)).body.data.pendingApprovals[0]?.callId)) as string;
    const decided = await h.api(`/api/v1/tasks/${id}/tools/${callId}/approve`, { method: 'POST', json: { outcome: 'proceed_once' } });
    expect(decided.body.data.approved).toBe(true);
    const events = await followStream(`${h.url}/api/v1/tasks/${id}/stream?after=0`, 'test-key-tenant-a');
    expect(events.at(-1)!.payload.data.status).toBe('completed');
  });
});
