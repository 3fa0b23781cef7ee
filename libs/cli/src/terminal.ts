import type { Spinner } from 'nanospinner';
import { createSpinner } from 'nanospinner';
import pc from 'picocolors';

export type Colors = ReturnType<typeof pc.createColors>;

/**
 * Where `ats` writes, and how: in a terminal (stdin and stdout both TTYs) with colours, a spinner
 * and prompts; anywhere else (a pipe, a file, CI) plain lines only, never a prompt or an escape
 * sequence of its own.
 */
export class Terminal {
  readonly colors: Colors;
  private spinner: Spinner | undefined;
  private midLine = false;

  constructor(
    readonly interactive: boolean,
    private readonly stdout: NodeJS.WriteStream = process.stdout,
    private readonly stderr: NodeJS.WriteStream = process.stderr,
  ) {
    this.colors = pc.createColors(interactive && pc.isColorSupported);
  }

  static fromProcess(): Terminal {
    const tty = Boolean(process.stdout.isTTY && process.stdin.isTTY) && process.env.TERM !== 'dumb';
    return new Terminal(tty);
  }

  /** Text as it comes (streamed model output): the next line() starts on a fresh line. */
  write(text: string): void {
    if (text.length === 0) return;
    this.pauseSpinner();
    this.stdout.write(text);
    this.midLine = !text.endsWith('\n');
  }

  line(text = ''): void {
    this.pauseSpinner();
    this.stdout.write(`${this.midLine ? '\n' : ''}${text}\n`);
    this.midLine = false;
  }

  error(text: string): void {
    this.pauseSpinner();
    this.stderr.write(`${this.midLine ? '\n' : ''}${text}\n`);
    this.midLine = false;
  }

  /** Shows a spinner with this text until the next output (terminal only). */
  busy(text: string): void {
    // CI terminals (a TTY that nobody watches) get no animation: nanospinner would print each frame on a line there.
    if (!this.interactive || 'CI' in process.env) return;
    if (this.midLine) this.line();
    if (this.spinner?.isSpinning()) return void this.spinner.update({ text: this.colors.dim(text) });
    this.spinner = createSpinner(this.colors.dim(text), { stream: this.stdout, color: 'cyan' }).start();
  }

  pauseSpinner(): void {
    if (this.spinner?.isSpinning()) this.spinner.stop();
  }

  /** Stops the spinner and ends a streamed line, before something else (a prompt) takes the screen. */
  settle(): void {
    this.pauseSpinner();
    if (this.midLine) this.line();
  }

  /** Resolves once what was written has reached the stream, so the process can exit without losing output. */
  async flush(): Promise<void> {
    this.settle();
    await Promise.all([this.stdout, this.stderr].map((stream) => new Promise<void>((done) => stream.write('', () => done()))));
  }
}
