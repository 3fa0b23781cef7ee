import type { ObjectStore } from '@app/object-store';
import type { PieceLocation } from '@app/task-domain';

/** A pack is put once it holds this much: a checkpoint of many small files is several puts, never one unbounded buffer. */
export const PACK_MAX_BYTES = 32 * 1024 ** 2;

/**
 * The pieces one checkpoint adds (file contents and tree nodes), gathered into as few objects as
 * possible: a durable put costs milliseconds, so one per piece would cost a step tens of them
 * (docs/design/workspace-checkpoints.md "Q4"). `keyOf(n)` names the n-th pack (0, 1, …).
 */
export class PackBuilder {
  private current: Buffer[] = [];
  private currentBytes = 0;
  private readonly written: string[] = [];
  private addedBytes = 0;

  constructor(
    private readonly objects: ObjectStore,
    private readonly keyOf: (n: number) => string,
  ) {}

  /** Where `bytes` will be once the pack is put. */
  add(bytes: Buffer): PieceLocation {
    const at = { key: this.keyOf(this.written.length), offset: this.currentBytes, length: bytes.length };
    this.current.push(bytes);
    this.currentBytes += bytes.length;
    this.addedBytes += bytes.length;
    return at;
  }

  /** Puts the pack being filled when it is full; call between pieces. */
  async putIfFull(): Promise<void> {
    if (this.currentBytes >= PACK_MAX_BYTES) await this.putCurrent();
  }

  /** Puts what is left; returns every pack key written, in order. */
  async finish(): Promise<string[]> {
    if (this.currentBytes > 0) await this.putCurrent();
    return [...this.written];
  }

  /** Bytes added so far, put or not. */
  get bytes(): number {
    return this.addedBytes;
  }

  /** Removes what was put: the checkpoint was not recorded. */
  async discard(): Promise<void> {
    await Promise.all(this.written.map((key) => this.objects.delete(key).catch(() => undefined)));
  }

  private async putCurrent(): Promise<void> {
    const key = this.keyOf(this.written.length);
    await this.objects.put(key, Buffer.concat(this.current, this.currentBytes), { contentType: 'application/octet-stream' });
    this.written.push(key);
    this.current = [];
    this.currentBytes = 0;
  }
}
