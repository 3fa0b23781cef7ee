import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { createServer } from 'node:https';
import { join } from 'node:path';

/**
 * An HTTPS server answering `body`, with a throwaway self-signed certificate for 127.0.0.2 made by
 * openssl in `dir`: the egress tests' HTTPS "internet" (clients inside use --insecure).
 */
export function createLocalTlsServer(dir: string, body: string): Server {
  const key = join(dir, 'key.pem');
  const cert = join(dir, 'cert.pem');
  const subject = ['-subj', '/CN=127.0.0.2', '-keyout', key, '-out', cert];
  const curve = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1'];
  execFileSync('openssl', ['req', '-x509', ...curve, '-nodes', '-days', '1', ...subject], { stdio: 'ignore' });
  // Typed as the http.Server the tests keep their servers as: they only listen, ask the address and close.
  return createServer({ key: readFileSync(key), cert: readFileSync(cert) }, (_req, res) => res.end(body)) as unknown as Server;
}
