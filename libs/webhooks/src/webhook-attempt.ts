/** One attempt to deliver a message, as the deliveries endpoint shows it (docs/api.md "Webhooks"). */
export interface WebhookAttempt {
  /** When the attempt began (ISO 8601); also the signature's timestamp. */
  readonly at: string;
  /** The receiver's status, when it answered at all. */
  readonly statusCode?: number;
  /** Why the attempt did not deliver the message; absent when it did. */
  readonly error?: string;
  readonly durationMs: number;
}

export interface AttemptOutcome {
  readonly attempt: WebhookAttempt;
  /** The receiver answered 2xx: the message needs no further attempt. */
  readonly delivered: boolean;
}
