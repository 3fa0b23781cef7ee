import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateSecretsKey } from './secret-envelope';
import { loadSecretsKeyring } from './secrets-key.config';

describe('loadSecretsKeyring (SECRETS_KEY, SECRETS_KEY_FILE, SECRETS_KEY_PREVIOUS, the generated key)', () => {
  let dir: string;
  const logs: string[] = [];
  const log = (level: string, message: string) => logs.push(`${level}: ${message}`);
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'secrets-key-'));
    logs.length = 0;
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const b64 = (key = generateSecretsKey()) => key.bytes.toString('base64');

  it('takes the current key from SECRETS_KEY and never logs it', async () => {
    const key = generateSecretsKey();
    const keyring = await loadSecretsKeyring({ SECRETS_KEY: b64(key) }, { dataDir: dir, generateIfMissing: false, log });
    expect(keyring.current?.id).toBe(key.id);
    expect(logs.join('\n')).toContain(key.id);
    expect(logs.join('\n')).not.toContain(b64(key));
  });

  it('takes the current key from SECRETS_KEY_FILE', async () => {
    const key = generateSecretsKey();
    await writeFile(join(dir, 'kek'), `${b64(key)}\n`);
    const keyring = await loadSecretsKeyring({ SECRETS_KEY_FILE: join(dir, 'kek') }, { dataDir: dir, generateIfMissing: false, log });
    expect(keyring.current?.id).toBe(key.id);
  });

  it('adds SECRETS_KEY_PREVIOUS for opening only', async () => {
    const [current, old1, old2] = [generateSecretsKey(), generateSecretsKey(), generateSecretsKey()];
    const keyring = await loadSecretsKeyring(
      { SECRETS_KEY: b64(current), SECRETS_KEY_PREVIOUS: ` ${b64(old1)} ,${b64(old2)}` },
      { dataDir: dir, generateIfMissing: false, log },
    );
    expect(keyring.current?.id).toBe(current.id);
    expect(keyring.keyIds).toEqual([current.id, old1.id, old2.id]);
  });

  it.each([
    ['a malformed SECRETS_KEY', { SECRETS_KEY: 'short' }, /^SECRETS_KEY must be 32 random bytes/],
    ['a malformed previous key', { SECRETS_KEY_PREVIOUS: 'short' }, /^SECRETS_KEY_PREVIOUS \(entry 1\) must be 32 random bytes/],
    ['both SECRETS_KEY and SECRETS_KEY_FILE', { SECRETS_KEY: 'x', SECRETS_KEY_FILE: '/x' }, /both set/],
    ['a missing SECRETS_KEY_FILE', { SECRETS_KEY_FILE: '/nonexistent/kek' }, /^SECRETS_KEY_FILE \/nonexistent\/kek cannot be read: ENOENT/],
  ])('stops start-up on %s', async (_what, env, message) => {
    await expect(loadSecretsKeyring(env, { dataDir: dir, generateIfMissing: true, log })).rejects.toThrow(message);
  });

  it('has no key and says what that means when nothing is set outside the all-in-one mode', async () => {
    const keyring = await loadSecretsKeyring({}, { dataDir: dir, generateIfMissing: false, log });
    expect(keyring.canSeal).toBe(false);
    expect(logs.join('\n')).toMatch(/warn: No SECRETS_KEY or SECRETS_KEY_FILE set: this process can neither seal nor open task secrets/);
  });

  it('all-in-one: generates DATA_DIR/secrets.key (0600) on first start, says so once, and reuses it', async () => {
    const dataDir = join(dir, 'data');
    const first = await loadSecretsKeyring({}, { dataDir, generateIfMissing: true, log });
    const path = join(dataDir, 'secrets.key');
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(first.current?.id).toBeDefined();
    const stored = (await readFile(path, 'utf8')).trim();
    expect(Buffer.from(stored, 'base64')).toHaveLength(32);
    const generatedLines = logs.filter((l) => l.includes('generated the key'));
    expect(generatedLines).toHaveLength(1);
    expect(generatedLines[0]).toContain(path);
    expect(logs.join('\n')).not.toContain(stored);

    logs.length = 0;
    const second = await loadSecretsKeyring({}, { dataDir, generateIfMissing: true, log });
    expect(second.current?.id).toBe(first.current?.id);
    expect(logs.join('\n')).not.toContain('generated the key');
  });

  it('all-in-one: warns when a configured key leaves the generated key out', async () => {
    await loadSecretsKeyring({}, { dataDir: dir, generateIfMissing: true, log });
    const generated = (await readFile(join(dir, 'secrets.key'), 'utf8')).trim();
    logs.length = 0;
    await loadSecretsKeyring({ SECRETS_KEY: b64() }, { dataDir: dir, generateIfMissing: true, log });
    expect(logs.join('\n')).toMatch(/holds an earlier generated key .* neither SECRETS_KEY nor in SECRETS_KEY_PREVIOUS/);
    logs.length = 0;
    await loadSecretsKeyring({ SECRETS_KEY: b64(), SECRETS_KEY_PREVIOUS: generated }, { dataDir: dir, generateIfMissing: true, log });
    expect(logs.join('\n')).not.toContain('earlier generated key');
  });
});
