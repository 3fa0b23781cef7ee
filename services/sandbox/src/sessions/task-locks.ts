/**
 * One operation at a time per task: a tool call, an upload, an expiry or a restore of the same
 * sandbox never overlap (an expiry must not snapshot a workspace a command is writing to).
 */
export class TaskLocks {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(taskId: string, body: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(taskId) ?? Promise.resolve();
    const next = previous.then(body, body);
    const tail = next.catch(() => undefined);
    this.tails.set(taskId, tail);
    void tail.then(() => {
      if (this.tails.get(taskId) === tail) this.tails.delete(taskId);
    });
    return next;
  }

  isBusy(taskId: string): boolean {
    return this.tails.has(taskId);
  }
}
