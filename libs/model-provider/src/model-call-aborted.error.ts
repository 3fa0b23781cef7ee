/**
 * The caller's AbortSignal fired (task cancelled, shutdown). Named 'AbortError' like the DOM's
 * own so code that already checks `error.name === 'AbortError'` treats it the same way.
 */
export class ModelCallAbortedError extends Error {
  readonly code = 'MODEL_PROVIDER.ABORTED';
  constructor(options?: ErrorOptions) {
    super('The model call was aborted', options);
    this.name = 'AbortError';
  }
}
