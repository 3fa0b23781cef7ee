import type { Stream } from 'node:stream';
import { SecretVault } from '@app/common';

/** Enough of a failing server's last words to say why, little enough for one error message. */
const TAIL_CHARS = 1000;

/**
 * Keeps reading a stdio server's stderr (an unread pipe would block a chatty server) and keeps
 * its last characters, so a server that fails to start can say why: a missing mount, a module
 * not found. The server's own configured env values are redacted from what it said.
 */
export class StderrTail {
  private tail = '';
  private readonly vault = new SecretVault();

  constructor(stream: Stream | null, serverEnv: Readonly<Record<string, string>>) {
    this.vault.put('server', serverEnv);
    stream?.on('data', (chunk: Buffer) => {
      this.tail = (this.tail + chunk.toString('utf8')).slice(-TAIL_CHARS * 2);
    });
  }

  /** `error`'s message, followed by what the server last wrote to stderr, if anything. */
  explain(error: unknown): Error {
    const message = error instanceof Error ? error.message : String(error);
    const said = this.vault.redact('server', this.tail).trim().slice(-TAIL_CHARS);
    return new Error(said ? `${message}; its stderr ended with: ${said}` : message);
  }
}
