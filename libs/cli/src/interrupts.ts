/**
 * Calls `onInterrupt` on Ctrl-C until disposed. In a terminal, stdin is put in raw mode and the
 * key read as a byte: no SIGINT is raised, so no library's signal handler (spinners exit the
 * process on SIGINT) gets ahead of the question "cancel or detach?". Elsewhere (a pipe, CI), a
 * SIGINT is the interrupt. `pause`/`resume` hand stdin to a prompt and take it back.
 */
export class InterruptWatcher {
  private active = false;
  private readonly onData = (chunk: Buffer) => {
    if (chunk.includes(0x03)) this.onInterrupt();
  };
  private readonly onSignal = () => this.onInterrupt();

  constructor(
    private readonly interactive: boolean,
    private readonly onInterrupt: () => void,
  ) {
    process.on('SIGINT', this.onSignal);
    this.resume();
  }

  resume(): void {
    if (!this.interactive || this.active) return;
    this.active = true;
    process.stdin.setRawMode(true);
    process.stdin.on('data', this.onData);
    process.stdin.resume();
  }

  pause(): void {
    if (!this.active) return;
    this.active = false;
    process.stdin.off('data', this.onData);
    process.stdin.setRawMode(false);
    process.stdin.pause();
  }

  dispose(): void {
    this.pause();
    process.off('SIGINT', this.onSignal);
  }
}
