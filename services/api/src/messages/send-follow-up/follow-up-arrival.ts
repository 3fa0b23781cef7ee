import type { NestFastifyApplication } from '@nestjs/platform-fastify';
// A type only: `import type` keeps fastify out of the compiled code's requires (SWC cannot tell an interface from a class).
import type { FastifyRequest } from 'fastify';
import type { IncomingMessage } from 'node:http';
import { TaskViewsStore } from '@app/read-models';
import type { TaskView } from '@app/task-domain';

const FOLLOW_UP_ROUTE = '/api/v1/tasks/:id/messages';

/** The task as this instance knew it when each follow-up's headers arrived (docs/api.md "Follow-ups while a turn runs"). */
const arrivals = new WeakMap<IncomingMessage, TaskView>();

/**
 * An `interrupt` or `rollback` stops the turn that ran when the request arrived. The earliest
 * point to read that is the request's first hook, before its body is read and its guards run:
 * of two sent at once, both then name the same turn, and the second to be recorded loses (409),
 * however the service interleaves them afterwards. Read from this instance's views without a
 * store read (none may be awaited here); the controller still reads the task afresh, for the
 * tenant check and when nothing was known here yet.
 */
export function recordFollowUpArrivals(app: NestFastifyApplication): void {
  const views = app.get(TaskViewsStore);
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onRequest', (request, _reply, done) => {
      if (request.method === 'POST' && request.routeOptions.url === FOLLOW_UP_ROUTE) {
        const view = views.get((request.params as { id?: string }).id ?? '');
        if (view) arrivals.set(request.raw, view);
      }
      done();
    });
}

/** The task's view when the request arrived, if this instance knew the task then. */
export function viewOnArrival(request: FastifyRequest): TaskView | undefined {
  return arrivals.get(request.raw);
}
