import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);
let sessions = 0;

/**
 * A real pseudo-terminal: a command started in a detached tmux session on a private server
 * socket (`tmux -L`), so tests type keys into it and read the screen as a person would see it.
 * The command's exit status is printed after it as `[exit N]`, and the pane stays to be read.
 */
export class TmuxTerminal {
  private constructor(private readonly socket: string) {}

  static async start(command: string, env: NodeJS.ProcessEnv, cwd: string): Promise<TmuxTerminal> {
    const socket = `ats-cli-test-${process.pid}-${++sessions}`;
    const script = `${command}; echo "[exit $?]"; sleep 3600`;
    // The server inherits this environment, and the pane's command with it. No CI variable: the
    // pane is a terminal someone watches.
    const { CI: _ci, ...rest } = env;
    await run('tmux', ['-L', socket, '-f', '/dev/null', 'new-session', '-d', '-s', 'main', '-x', '120', '-y', '50', 'sh', '-c', script], {
      env: { ...rest, TERM: 'xterm-256color' },
      cwd,
    });
    await run('tmux', ['-L', socket, 'set-option', '-t', 'main', 'history-limit', '5000']);
    return new TmuxTerminal(socket);
  }

  /** The screen and its scrollback as text (no colours), lines joined where the terminal wrapped them. */
  async screen(): Promise<string> {
    const { stdout } = await run('tmux', ['-L', this.socket, 'capture-pane', '-p', '-J', '-t', 'main', '-S', '-5000']);
    return stdout.replace(/\n+$/, '\n');
  }

  /** Keys as tmux names them: 'Enter', 'Down', 'C-c', or literal text with literal = true. */
  async press(...keys: string[]): Promise<void> {
    await run('tmux', ['-L', this.socket, 'send-keys', '-t', 'main', ...keys]);
  }

  async type(text: string): Promise<void> {
    await run('tmux', ['-L', this.socket, 'send-keys', '-t', 'main', '-l', text]);
  }

  /** Waits until the screen matches, and returns it. */
  async waitFor(pattern: RegExp | string, timeoutMs = 20_000): Promise<string> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const screen = await this.screen();
      if (typeof pattern === 'string' ? screen.includes(pattern) : pattern.test(screen)) return screen;
      if (Date.now() > until) throw new Error(`timed out waiting for ${String(pattern)}; the screen was:\n${screen}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** The command's exit status, once it has ended. */
  async exitCode(timeoutMs = 20_000): Promise<number> {
    const screen = await this.waitFor(/\[exit \d+\]/, timeoutMs);
    return Number(/\[exit (\d+)\]/.exec(screen)![1]);
  }

  async close(): Promise<void> {
    await run('tmux', ['-L', this.socket, 'kill-server']).catch(() => undefined);
  }
}
