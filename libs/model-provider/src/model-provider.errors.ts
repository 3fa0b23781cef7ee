// The model provider's errors. Codes are MODEL_PROVIDER.<CONDITION> (see ErrorCode in libs/common).

export class ModelProviderError extends Error {
  readonly code = 'MODEL_PROVIDER.FAILED';
  constructor(
    message: string,
    readonly retryable: boolean,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'ModelProviderError';
  }
}

/** Raised when no model is configured; its message names the variables to set. */
export class ModelNotConfiguredError extends Error {
  readonly code = 'MODEL_PROVIDER.NOT_CONFIGURED';
  constructor(message: string) {
    super(message);
    this.name = 'ModelNotConfiguredError';
  }
}

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
