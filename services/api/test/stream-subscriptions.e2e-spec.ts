import { TaskEventFeed } from '../src/events-stream/task-event-feed';
import { Harness, startHarness, waitFor } from '../../../test/support/service-harness';

// Reaches into the API's Nest app, so it runs in the all-in-one mode only; the rest of the stream
// suite (stream.e2e-spec.ts) runs in both modes.

const AUTH = { authorization: 'Bearer test-key-tenant-a' };

describe('SSE stream subscriptions', () => {
  let h: Harness;
  beforeAll(async () => (h = await startHarness()));
  afterAll(async () => h.close());

  it('releases its subscription when the client disconnects', async () => {
    const feed = h.app.get(TaskEventFeed);
    h.model.script({ hang: true });
    const id = (await h.api('/api/v1/tasks', { method: 'POST', json: { message: 'hang' } })).body.data.id;
    const baseline = feed.listenerCount;
    const controller = new AbortController();
    const response = await fetch(`${h.url}/api/v1/tasks/${id}/stream`, { headers: AUTH, signal: controller.signal });
    expect(response.status).toBe(200);
    await waitFor(() => (feed.listenerCount === baseline + 1 ? true : undefined), 2000, 'subscription');
    controller.abort();
    await waitFor(() => (feed.listenerCount === baseline ? true : undefined), 2000, 'subscription released');
    await h.api(`/api/v1/tasks/${id}/cancel`, { method: 'POST' });
  });
});
