// The durable runners' errors. Codes are RUNNER.<CONDITION> (see ErrorCode in libs/common).

/** The Temporal frontend did not answer: the message names TEMPORAL_ADDRESS, which the SDK's own does not. */
export class TemporalUnreachableError extends Error {
  readonly code = 'RUNNER.TEMPORAL_UNREACHABLE';
  constructor(
    readonly address: string,
    cause: unknown,
  ) {
    super(`cannot reach Temporal at TEMPORAL_ADDRESS=${address}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'TemporalUnreachableError';
  }
}
