/** Where, inside the sandbox, the egress proxy's socket and the forwarder to it are. */
export const SANDBOX_EGRESS = {
  socket: '/run/ats/egress.sock',
  forwarder: '/run/ats/egress-forwarder.js',
  /** The service's own node binary, bound read-only: the host's may live outside /usr. */
  node: '/run/ats/node',
  /** The loopback port the usual proxy variables name, in the sandbox's own network namespace. */
  port: 3128,
} as const;

/** The descriptor the forwarder closes once it listens (SHELL_ARGV waits for its end of file). */
export const READY_FD = 3;

/**
 * The forwarder that runs inside the sandbox (with the service's node) while a command does:
 * tools speak HTTP proxy over TCP, and the only way out of the sandbox's empty network namespace
 * is the proxy's unix socket bound in, so each TCP connection to 127.0.0.1:3128 is piped to it.
 * Once listening it closes descriptor 3, the pipe the shell waits on before it runs the command
 * (not stdout: Node would hand a freed fd 1 to the next socket, and treat it as stdout).
 */
export const FORWARDER_SOURCE = `'use strict';
const fs = require('fs');
const net = require('net');
const server = net.createServer((client) => {
  const upstream = net.connect(${JSON.stringify(SANDBOX_EGRESS.socket)});
  const close = () => { client.destroy(); upstream.destroy(); };
  client.on('error', close);
  upstream.on('error', close);
  client.on('close', close);
  upstream.on('close', close);
  client.pipe(upstream).pipe(client);
});
server.listen(${SANDBOX_EGRESS.port}, '127.0.0.1', () => fs.closeSync(${READY_FD}));
`;

/** The proxy variables curl, pip, npm, git (and anything else that reads them) use inside. */
export function proxyEnv(): Record<string, string> {
  const url = `http://127.0.0.1:${SANDBOX_EGRESS.port}`;
  const env: Record<string, string> = {};
  for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY']) {
    env[name] = url;
    env[name.toLowerCase()] = url;
  }
  env.NO_PROXY = env.no_proxy = 'localhost,127.0.0.1,::1';
  return env;
}
