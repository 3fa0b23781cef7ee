import { createHash } from 'node:crypto';
import { Transform } from 'node:stream';
import { PayloadTooLargeError } from '@app/common';

/** A pass-through that counts and hashes the bytes going by, and stops the stream past `maxBytes`. */
export class CountingHash extends Transform {
  private readonly hash = createHash('sha256');
  size = 0;

  constructor(private readonly maxBytes = Number.POSITIVE_INFINITY) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null, data?: Buffer) => void): void {
    this.size += chunk.length;
    if (this.size > this.maxBytes) return done(new PayloadTooLargeError(`object exceeds ${this.maxBytes} bytes`));
    this.hash.update(chunk);
    done(null, chunk);
  }

  digest(): string {
    return this.hash.digest('hex');
  }
}
