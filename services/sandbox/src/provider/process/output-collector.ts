/**
 * Keeps the first `maxBytes` of a command's output (stdout and stderr in arrival order) and
 * counts the rest without storing it, so a flood neither blocks the command nor fills memory.
 */
export class OutputCollector {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  total = 0;

  constructor(private readonly maxBytes: number) {}

  readonly push = (chunk: Buffer): void => {
    this.total += chunk.length;
    const room = this.maxBytes - this.kept;
    if (room <= 0) return;
    const slice = chunk.length <= room ? chunk : chunk.subarray(0, room);
    this.chunks.push(slice);
    this.kept += slice.length;
  };

  get truncated(): boolean {
    return this.total > this.kept;
  }

  /** The kept bytes as UTF-8; a character cut at the limit becomes U+FFFD, not a crash. */
  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}
