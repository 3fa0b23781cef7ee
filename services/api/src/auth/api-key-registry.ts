import { Logger } from '@nestjs/common';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

export interface KeysFile {
  /** Tenant name → SHA-256 hex digests of the keys that act for it. */
  readonly tenants: Record<string, string[]>;
}

export const hashKey = (key: string): string => createHash('sha256').update(key, 'utf8').digest('hex');

/**
 * Accepted API keys, kept only as SHA-256 hashes. Sources, first that applies:
 * `API_KEYS` (comma-separated; each key its own tenant), `API_KEYS_FILE` (a KeysFile grouping
 * key hashes into tenants), else `DATA_DIR/api-keys.json`, created on first start with one
 * generated key that is printed once.
 */
export class ApiKeyRegistry {
  private constructor(private readonly tenantByHash: ReadonlyMap<string, string>) {}

  static async load(env: NodeJS.ProcessEnv, dataDir: string, logger = new Logger('Auth')): Promise<ApiKeyRegistry> {
    const fromEnv = (env.API_KEYS ?? '')
      .split(',')
      .map((k) => k.trim())
      .filter(Boolean);
    if (fromEnv.length > 0) {
      return new ApiKeyRegistry(new Map(fromEnv.map((key) => [hashKey(key), `key-${hashKey(key).slice(0, 16)}`])));
    }
    if (env.API_KEYS_FILE) return ApiKeyRegistry.fromFile(JSON.parse(await readFile(env.API_KEYS_FILE, 'utf8')) as KeysFile);
    const path = join(dataDir, 'api-keys.json');
    const existing = await readFile(path, 'utf8').catch(() => undefined);
    if (existing) return ApiKeyRegistry.fromFile(JSON.parse(existing) as KeysFile);
    const key = `ats_${randomBytes(24).toString('base64url')}`;
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, JSON.stringify({ tenants: { default: [hashKey(key)] } } satisfies KeysFile, null, 2), { mode: 0o600 });
    // Printed to the terminal once, on purpose: only its hash is kept.
    logger.warn(`No API_KEYS set: generated an API key (shown once, stored hashed in ${path}):\n\n    ${key}\n`);
    return ApiKeyRegistry.fromFile(JSON.parse(await readFile(path, 'utf8')) as KeysFile);
  }

  static fromFile(file: KeysFile): ApiKeyRegistry {
    const map = new Map<string, string>();
    for (const [tenant, hashes] of Object.entries(file.tenants ?? {})) for (const h of hashes) map.set(h.toLowerCase(), tenant);
    return new ApiKeyRegistry(map);
  }

  /** The tenant a key acts for, or undefined for an unknown key. */
  tenantOf(key: string): string | undefined {
    return this.tenantByHash.get(hashKey(key));
  }
}
