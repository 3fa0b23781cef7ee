/**
 * How the processes sharing one store tell each other that it has grown. Only positions travel:
 * every receiver reads the events themselves from the store, which stays the only truth, and
 * reads everything after what it has delivered, so a lost or duplicated notification can delay a
 * delivery (until the next notification or poll) but never lose or repeat an event.
 */
export interface AppendNotifications {
  /** Called after each append commits, with the append's last global position. */
  publish(position: number): void;
  /** Positions other processes announced; returns a function that stops listening. */
  subscribe(onPosition: (position: number) => void): () => void;
}
