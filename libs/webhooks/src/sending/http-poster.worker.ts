import { parentPort, workerData } from 'node:worker_threads';
import type { PosterSettings } from './http-poster';
import { HttpPoster } from './http-poster';
import type { PostOrder, PostOutcome } from './poster-messages';
import { BATCH_ITEMS, MicrotaskBatcher } from './poster-messages';

// The worker thread of WorkerPoster: makes the POSTs with its own event loop, so that a webhook
// goes out as soon as it is due even while the service's loop is busy with a burst of tasks
// (undici writes a request on a kept-alive socket only after a loop turn, and reads every answer
// in one: BENCHMARKS.md "Webhooks").

const port = parentPort!;
const poster = new HttpPoster(workerData as PosterSettings);
const results = new MicrotaskBatcher<PostOutcome>((batch) => port.postMessage(batch), BATCH_ITEMS);

port.on('message', (orders: PostOrder[] | 'close') => {
  if (orders === 'close') {
    void poster.close().finally(() => port.close());
    return;
  }
  for (const { n, request } of orders) {
    poster.post(request).then(
      (result) => results.add({ n, result }),
      (error: unknown) =>
        results.add({ n, result: { error: `could not deliver: ${error instanceof Error ? error.message : String(error)}` } }),
    );
  }
});
