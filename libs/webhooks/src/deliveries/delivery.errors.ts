/**
 * A stored event this code cannot read as a delivery event (delivery-event.decoder.ts). Not a
 * conflict: the store holds something this release does not understand, so the reader stops.
 */
export class UnreadableWebhookEventError extends Error {
  constructor(
    readonly streamId: string,
    readonly revision: number,
    reason: string,
  ) {
    super(`${streamId}@${revision}: ${reason}`);
    this.name = 'UnreadableWebhookEventError';
  }
}
