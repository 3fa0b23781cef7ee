import { connect } from 'node:net';

// What the health-port specs ask a local port: what a path answers, and whether anything listens.

/** The status `path` answers on `port`, or the error code when nothing answers there. */
export async function statusOf(port: number, path: string): Promise<number | string> {
  try {
    return (await fetch(`http://127.0.0.1:${port}${path}`)).status;
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause;
    return cause?.code ?? String(error);
  }
}

/** Whether anything accepts a TCP connection on `port` (a fresh one: fetch would reuse a pooled socket). */
export function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => resolve(true)).once('error', () => resolve(false));
    socket.once('connect', () => socket.destroy());
  });
}
