import { realpathSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

// The real reference MCP servers from npm, started from node_modules (nothing downloads).
export const EVERYTHING_SERVER = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
export const MEMORY_SERVER = require.resolve('@modelcontextprotocol/server-memory/dist/index.js');
/** A stdio server whose tools probe what its process can reach (files, network, uid, env). */
export const PROBE_SERVER = join(__dirname, 'mcp-probe-server.js');
/** What a jailed stdio server must see read-only to load the servers above and their dependencies. */
// Its real path: the sandbox mounts it, and a symlinked node_modules (a git worktree's) would point out of the mount.
export const REPO_NODE_MODULES = realpathSync(join(__dirname, '..', '..', 'node_modules'));

export interface RunningMcpServer {
  /** The Streamable HTTP endpoint, `http://127.0.0.1:<port>/mcp`. */
  readonly url: string;
  readonly port: number;
  close(): void;
}

/** server-everything over Streamable HTTP on a free loopback port. */
export async function startEverythingHttp(): Promise<RunningMcpServer> {
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [EVERYTHING_SERVER, 'streamableHttp'], {
    env: { PATH: process.env.PATH, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('server-everything (streamableHttp) did not start within 15 s')), 15_000);
    child.once('exit', (code) => reject(new Error(`server-everything exited with ${code}`)));
    child.stderr!.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('listening')) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  return { url: `http://127.0.0.1:${port}/mcp`, port, close: () => void child.kill() };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
