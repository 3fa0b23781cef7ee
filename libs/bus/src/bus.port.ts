/**
 * The message bus between services: request/reply for commands, publish/subscribe for facts.
 * In-process adapter for the all-in-one mode; NATS for the distributed mode. Payloads are plain
 * JSON values so that every adapter carries them the same way.
 */
export interface MessageBus {
  /** Sends a command to one handler of `subject` and waits for its reply, at most `timeoutMs`. */
  request<Req, Res>(subject: string, payload: Req, options?: { timeoutMs?: number }): Promise<Res>;

  /** Handles requests on `subject`; instances sharing `subject` share the work (one answers). */
  handle<Req, Res>(subject: string, handler: (payload: Req) => Promise<Res>): Unsubscribe;

  /** Publishes a fact to every subscriber; fire-and-forget. */
  publish<T>(subject: string, payload: T): void;

  subscribe<T>(subject: string, handler: (payload: T) => void): Unsubscribe;

  /** Resolves once the bus's server answers a round trip (readiness); absent when there is no server. */
  ping?(): Promise<void>;

  close(): Promise<void>;
}

export type Unsubscribe = () => void;

export class BusTimeoutError extends Error {
  readonly code = 'BUS.TIMEOUT';
  constructor(
    readonly subject: string,
    readonly timeoutMs: number,
  ) {
    super(`no reply on ${subject} within ${timeoutMs} ms`);
    this.name = 'BusTimeoutError';
  }
}

export class NoHandlerError extends Error {
  readonly code = 'BUS.NO_HANDLER';
  constructor(readonly subject: string) {
    super(`no handler for ${subject}`);
    this.name = 'NoHandlerError';
  }
}

/** The bus cannot carry the message now: its connection is down (and reconnecting) or it is closed. */
export class BusUnavailableError extends Error {
  readonly code = 'BUS.UNAVAILABLE';
  constructor(
    readonly subject: string,
    reason: string,
  ) {
    super(`cannot send on ${subject}: ${reason}`);
    this.name = 'BusUnavailableError';
  }
}

/**
 * A handler's answer that it did nothing and may be asked again: something it needs before it
 * starts (e.g. the store its leases live in) is down. Requesters may resend it (see
 * requestUntilDelivered); a handler throws it only where it is certain no work was done.
 */
export class HandlerUnavailableError extends Error {
  static readonly CODE = 'HANDLER.UNAVAILABLE';
  readonly code = HandlerUnavailableError.CODE;
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'HandlerUnavailableError';
  }
}

/** A handler's failure, carried back to the requester with its code and message. */
export class RemoteError extends Error {
  constructor(
    readonly subject: string,
    readonly remoteCode: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'RemoteError';
  }
}

export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
