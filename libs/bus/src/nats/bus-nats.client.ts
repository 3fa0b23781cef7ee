import type { PacketId, ReadPacket, WritePacket } from '@nestjs/microservices';
import { ClientNats } from '@nestjs/microservices';
import type { Msg, NatsConnection } from 'nats';
import { NoHandlerError } from '../bus.port';

/**
 * Nest's NATS client (`send` for request/reply, `emit` for facts) on the bus's one connection,
 * so that a subscription made just before a request is already known to the server when the
 * request arrives (one connection keeps protocol order; two would race).
 */
export class BusNatsClient extends ClientNats {
  constructor(private readonly connection: NatsConnection) {
    super({ servers: connection.getServer() });
  }

  override createClient(): Promise<NatsConnection> {
    return Promise.resolve(this.connection);
  }

  /**
   * The bus watches and logs the shared connection itself. Nest's version would also make every
   * `send` fail while disconnected with a bare string; the bus fails those with BusUnavailableError.
   */
  override async handleStatusUpdates(): Promise<void> {}

  /** Nest reads the server's "no responders" status (an empty 503 reply) as an empty response. */
  override createSubscriptionHandler(
    packet: ReadPacket & PacketId,
    callback: (packet: WritePacket) => unknown,
  ): (error: string | Error | undefined, natsMsg: Partial<Msg>) => Promise<unknown> {
    const handle = super.createSubscriptionHandler(packet, callback);
    return async (error, natsMsg) => {
      if (!error && natsMsg?.data?.length === 0 && natsMsg.headers?.code === 503) {
        return callback({ err: new NoHandlerError(this.normalizePattern(packet.pattern)), isDisposed: true });
      }
      return handle(error, natsMsg);
    };
  }
}
