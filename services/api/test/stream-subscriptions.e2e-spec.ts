import type { TaskStreamEvent } from '@agentic-task-service/client';
import { TaskEventFeed } from '../src/events-stream/task-event-feed';
import type { Harness } from '../../../test/support/service-harness';
import { startHarness, waitFor } from '../../../test/support/service-harness';

// Reaches into the API's Nest app, so it runs in the all-in-one mode only; the rest of the stream
// suite (stream.e2e-spec.ts) runs in both modes.

describe('SSE stream subscriptions', () => {
  let h: Harness;
  beforeAll(async () => (h = await startHarness()));
  afterAll(async () => h.close());

  it('releases its subscription when the client disconnects', async () => {
    const feed = h.app.get(TaskEventFeed);
    const ats = h.client();
    h.model.script({ hang: true });
    const { id } = await ats.tasks.create({ message: 'hang' });
    const baseline = feed.listenerCount;
    const controller = new AbortController();
    const received: TaskStreamEvent[] = [];
    const following = (async () => {
      for await (const event of ats.tasks.stream(id, { signal: controller.signal })) received.push(event);
    })();
    // An event arrived: the stream was answered 200 and is open.
    await waitFor(() => (received.length > 0 ? true : undefined), 2000, 'the first event');
    expect(received[0].type).toBe('message');
    await waitFor(() => (feed.listenerCount === baseline + 1 ? true : undefined), 2000, 'subscription');
    controller.abort(new Error('stop following'));
    await expect(following).rejects.toThrow('stop following');
    await waitFor(() => (feed.listenerCount === baseline ? true : undefined), 2000, 'subscription released');
    await ats.tasks.cancel(id);
  });
});
