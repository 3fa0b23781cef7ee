/** Polls until `done()` holds; deliveries are asynchronous, so tests wait for them. */
export async function waitFor(done: () => boolean | Promise<boolean>, timeoutMs = 4000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}
