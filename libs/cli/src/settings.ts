import { chmod, mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { CliExit, ExitCode } from './exit-codes';

export const DEFAULT_URL = 'http://127.0.0.1:3000';

export interface Settings {
  readonly url: string;
  readonly apiKey: string;
}

/** $XDG_CONFIG_HOME/ats/config.json, else ~/.config/ats/config.json. */
export function configFile(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME.startsWith('/') ? env.XDG_CONFIG_HOME : join(homedir(), '.config');
  return join(base, 'ats', 'config.json');
}

export async function readStoredSettings(env: NodeJS.ProcessEnv = process.env): Promise<Partial<Settings>> {
  try {
    const stored = JSON.parse(await readFile(configFile(env), 'utf8')) as Partial<Settings>;
    return {
      url: typeof stored.url === 'string' ? stored.url : undefined,
      apiKey: typeof stored.apiKey === 'string' ? stored.apiKey : undefined,
    };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new CliExit(ExitCode.failed, `ats: cannot read ${configFile(env)}: ${(error as Error).message}`);
  }
}

/** ATS_URL and ATS_API_KEY, each falling back to what `ats login` stored. */
export async function resolveSettings(env: NodeJS.ProcessEnv = process.env): Promise<Settings> {
  const stored = env.ATS_URL && env.ATS_API_KEY ? {} : await readStoredSettings(env);
  const url = env.ATS_URL || stored.url || DEFAULT_URL;
  const apiKey = env.ATS_API_KEY || stored.apiKey;
  if (!apiKey) throw new CliExit(ExitCode.failed, 'ats: no API key: set ATS_API_KEY, or run `ats login`');
  return { url, apiKey };
}

/**
 * Stores the settings readable by the user only: the folder 0700, the file created 0600 under a
 * temporary name and renamed over the old one, so no moment exists where the key sits in a file
 * others can read.
 */
export async function storeSettings(settings: Settings, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const file = configFile(env);
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  const temporary = `${file}.${process.pid}.tmp`;
  const handle = await open(temporary, 'wx', 0o600);
  try {
    await handle.writeFile(`${JSON.stringify({ url: settings.url, apiKey: settings.apiKey }, null, 2)}\n`);
  } finally {
    await handle.close();
  }
  try {
    await chmod(temporary, 0o600);
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
  return file;
}
