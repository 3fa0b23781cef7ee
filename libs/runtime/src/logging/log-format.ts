export type LogFormat = 'json' | 'pretty';

/**
 * `LOG_FORMAT`: `json` (one JSON object per line, for collectors) or `pretty` (coloured text for a
 * person). Unset, it is `pretty` when stdout is a terminal (`npm start` by hand) and `json`
 * otherwise: a service under systemd, Docker or Kubernetes writes to a pipe or a file.
 */
export function logFormatFromEnv(env: NodeJS.ProcessEnv, stdoutIsTerminal = Boolean(process.stdout.isTTY)): LogFormat {
  const given = env.LOG_FORMAT?.trim().toLowerCase();
  if (!given) return stdoutIsTerminal ? 'pretty' : 'json';
  if (given === 'json' || given === 'pretty') return given;
  throw new Error(`LOG_FORMAT must be json or pretty, got "${env.LOG_FORMAT}"`);
}
