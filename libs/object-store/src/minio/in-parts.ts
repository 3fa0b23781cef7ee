export interface Part {
  readonly bytes: Buffer;
  /** True for the remainder once the source has ended (possibly empty). */
  readonly last: boolean;
}

/**
 * Regroups a stream's chunks into parts of at least `size` bytes, then the remainder. Only one part
 * is held at a time, and the source is not read while the consumer works on a part.
 */
export async function* inParts(source: AsyncIterable<Buffer>, size: number): AsyncGenerator<Part> {
  let chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of source) {
    chunks.push(chunk);
    length += chunk.length;
    if (length >= size) {
      yield { bytes: Buffer.concat(chunks, length), last: false };
      chunks = [];
      length = 0;
    }
  }
  yield { bytes: Buffer.concat(chunks, length), last: true };
}
