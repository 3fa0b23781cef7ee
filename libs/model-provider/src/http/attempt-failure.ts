/**
 * Why one HTTP attempt failed. Internal to the adapter: the provider turns it into a retry or,
 * once it gives up, into the public ModelProviderError.
 */
export class AttemptFailure extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly retryAfterMs?: number,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'AttemptFailure';
  }
}
