import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SecretsKey } from './secret-envelope';
import { SecretsKeyring, generateSecretsKey, parseSecretsKey } from './secret-envelope';

/** Where the all-in-one mode keeps the key it generated, under DATA_DIR. */
export const GENERATED_SECRETS_KEY_FILE = 'secrets.key';

export interface SecretsKeyOptions {
  readonly dataDir: string;
  /** The all-in-one mode: with neither SECRETS_KEY nor SECRETS_KEY_FILE set, use (or make) DATA_DIR/secrets.key. */
  readonly generateIfMissing: boolean;
  readonly log?: (level: 'log' | 'warn', message: string) => void;
}

/**
 * The key-encryption keys of this process, from SECRETS_KEY or SECRETS_KEY_FILE (the current key)
 * and SECRETS_KEY_PREVIOUS (comma-separated keys rotated out, still opening old envelopes). A
 * malformed key stops start-up with a message naming the variable, never showing the value.
 */
export async function loadSecretsKeyring(env: NodeJS.ProcessEnv, options: SecretsKeyOptions): Promise<SecretsKeyring> {
  const log = options.log ?? (() => undefined);
  const previous = (env.SECRETS_KEY_PREVIOUS ?? '')
    .split(',')
    .map((k) => k.trim())
    .filter(Boolean)
    .map((k, i) => parseSecretsKey(k, `SECRETS_KEY_PREVIOUS (entry ${i + 1})`));
  const current = await currentKey(env, options, log);
  const keyring = new SecretsKeyring(current, previous);
  if (!current) {
    log(
      'warn',
      'No SECRETS_KEY or SECRETS_KEY_FILE set: this process can neither seal nor open task secrets (an API refuses creates with secrets; ' +
        'an orchestrator or sandbox fails the turns of tasks that have them)',
    );
  } else {
    const older = keyring.keyIds.slice(1);
    log('log', `secrets at rest: sealed with key id ${current.id}${older.length > 0 ? `; also opening key id ${older.join(', ')}` : ''}`);
  }
  return keyring;
}

async function currentKey(
  env: NodeJS.ProcessEnv,
  options: SecretsKeyOptions,
  log: NonNullable<SecretsKeyOptions['log']>,
): Promise<SecretsKey | undefined> {
  const inline = env.SECRETS_KEY?.trim();
  const file = env.SECRETS_KEY_FILE?.trim();
  if (inline && file) throw new Error('SECRETS_KEY and SECRETS_KEY_FILE are both set: set one of them');
  if (inline) return warnAboutGeneratedKey(parseSecretsKey(inline, 'SECRETS_KEY'), env, options, log);
  if (file)
    return warnAboutGeneratedKey(
      parseSecretsKey(await readKeyFile(file, 'SECRETS_KEY_FILE'), `SECRETS_KEY_FILE (${file})`),
      env,
      options,
      log,
    );
  if (!options.generateIfMissing) return undefined;

  const path = join(options.dataDir, GENERATED_SECRETS_KEY_FILE);
  const existing = await readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw new Error(`${path} (the generated SECRETS_KEY) cannot be read: ${error.code ?? error.message}`);
  });
  if (existing !== undefined) return parseSecretsKey(existing, path);
  const key = generateSecretsKey();
  await mkdir(options.dataDir, { recursive: true });
  try {
    // `wx`: a second process starting at the same moment never overwrites the first one's key.
    await writeFile(path, `${key.bytes.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return parseSecretsKey(await readFile(path, 'utf8'), path);
    throw error;
  }
  log(
    'warn',
    `No SECRETS_KEY set: generated the key that encrypts task secrets at rest, in ${path} (mode 0600, key id ${key.id}). ` +
      'Keep it with DATA_DIR and back it up with it: without it, stored secrets cannot be opened.',
  );
  return key;
}

async function readKeyFile(path: string, name: string): Promise<string> {
  const info = await stat(path).catch((error: NodeJS.ErrnoException) => {
    throw new Error(`${name} ${path} cannot be read: ${error.code ?? error.message}`, { cause: error });
  });
  if (!info.isFile()) throw new Error(`${name} ${path} is not a file`);
  return readFile(path, 'utf8');
}

/**
 * Moving an all-in-one service from its generated key to a configured one without listing the
 * generated key in SECRETS_KEY_PREVIOUS would make every earlier task's secrets unopenable: say so.
 */
async function warnAboutGeneratedKey(
  key: SecretsKey,
  env: NodeJS.ProcessEnv,
  options: SecretsKeyOptions,
  log: NonNullable<SecretsKeyOptions['log']>,
): Promise<SecretsKey> {
  if (!options.generateIfMissing) return key;
  const path = join(options.dataDir, GENERATED_SECRETS_KEY_FILE);
  const generated = await readFile(path, 'utf8').catch(() => undefined);
  if (generated === undefined) return key;
  let generatedId: string;
  try {
    generatedId = parseSecretsKey(generated, path).id;
  } catch {
    return key;
  }
  const previousIds = (env.SECRETS_KEY_PREVIOUS ?? '')
    .split(',')
    .map((k) => k.trim())
    .filter(Boolean)
    .map((k) => parseSecretsKey(k, 'SECRETS_KEY_PREVIOUS').id);
  if (generatedId !== key.id && !previousIds.includes(generatedId)) {
    log(
      'warn',
      `${path} holds an earlier generated key (key id ${generatedId}) that is neither SECRETS_KEY nor in SECRETS_KEY_PREVIOUS: secrets of tasks sealed with it cannot be opened`,
    );
  }
  return key;
}
