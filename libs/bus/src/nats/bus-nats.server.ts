import type { LoggerService } from '@nestjs/common';
import type { NatsContext } from '@nestjs/microservices';
import { ServerNats } from '@nestjs/microservices';
import type { Msg, NatsConnection, NatsError } from 'nats';
import { toWireError } from './wire-error';

type NatsCallback = (error: NatsError | null, msg: Msg) => void;

/**
 * Nest's NATS server (packet decoding, handler lookup, replies and error packets) on the bus's one
 * connection. Nest subscribes every handler once, in `listen()`, and cannot drop one; the bus
 * adds and removes handlers at any time, so it makes the subscriptions itself and hands each
 * message to `subscriptionCallback`, the callback `bindEvents` would have installed.
 */
export class BusNatsServer extends ServerNats {
  constructor(
    private readonly connection: NatsConnection,
    private readonly busLogger: LoggerService,
  ) {
    super({ servers: connection.getServer() });
  }

  override createNatsClient(): Promise<NatsConnection> {
    return Promise.resolve(this.connection);
  }

  /** The bus watches and logs the shared connection itself. */
  override async handleStatusUpdates(): Promise<void> {}

  /** Undecodable messages are logged; Nest would leave them as unhandled rejections. */
  subscriptionCallback(subject: string): NatsCallback {
    const handle = this.getMessageHandler(subject) as (error: NatsError | null, msg: Msg) => Promise<unknown>;
    return (error, msg) => {
      handle(error, msg).catch((e: unknown) =>
        this.busLogger.error(`message on ${subject} dropped: ${e instanceof Error ? e.message : String(e)}`),
      );
    };
  }

  removeHandler(subject: string): void {
    this.getHandlers().delete(this.normalizePattern(subject));
  }

  /**
   * A reply NATS refuses (over the server's max_payload, or the connection closed) would be an
   * unhandled rejection in Nest and leave the requester waiting for its timeout; answer with an
   * error packet instead, which is small enough to go through.
   */
  override getPublisher(natsMsg: Msg, id: string, ctx: NatsContext): (response: unknown) => unknown {
    const publish = super.getPublisher(natsMsg, id, ctx);
    return (response) => {
      try {
        return publish(response);
      } catch (error) {
        this.busLogger.error(`reply on ${natsMsg.subject} not sent: ${error instanceof Error ? error.message : String(error)}`);
        const code = (error as { code?: string }).code === 'MAX_PAYLOAD_EXCEEDED' ? 'BUS.PAYLOAD_TOO_LARGE' : 'BUS.REPLY_FAILED';
        try {
          return publish({ err: { ...toWireError(error), code }, isDisposed: true });
        } catch {
          return undefined;
        }
      }
    };
  }
}
