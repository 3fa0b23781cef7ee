import { SecretsKeyring, generateSecretsKey } from './secret-envelope';
import { SecretVault } from './secret-vault';
import { SecretsUnavailableError, TaskSecrets } from './task-secrets';
import { catchError } from '../testing/catch-error';

const SECRETS = { TOKEN: 'tok-0123456789', OTHER: 'other-value' };

describe('TaskSecrets: a task’s plain secrets from the vault or its envelope', () => {
  const key = generateSecretsKey();
  const sealer = new TaskSecrets(new SecretVault(), new SecretsKeyring(key));
  const sealed = { secretNames: Object.keys(SECRETS), sealedSecrets: sealer.seal('task_1', SECRETS) };

  it('opens the envelope with the process key and keeps the values in the vault for redaction', () => {
    const vault = new SecretVault();
    const secrets = new TaskSecrets(vault, new SecretsKeyring(key));
    expect(secrets.open('task_1', sealed)).toEqual(SECRETS);
    expect(vault.redact('task_1', 'x tok-0123456789 y')).toBe('x [REDACTED:TOKEN] y');
  });

  it('answers a task without secrets with nothing, whatever the key', () => {
    expect(new TaskSecrets(new SecretVault(), new SecretsKeyring(undefined)).open('task_1', { secretNames: [] })).toEqual({});
  });

  it.each([
    [
      'no key',
      new SecretsKeyring(undefined),
      /^Secrets TOKEN, OTHER cannot be opened: no SECRETS_KEY \(or SECRETS_KEY_FILE\) is set on this process/,
    ],
    [
      'a wrong key',
      new SecretsKeyring(generateSecretsKey()),
      /^Secrets TOKEN, OTHER cannot be opened: they were sealed with key id [0-9a-f]{16}, and this process has only key id/,
    ],
  ])('refuses with %s: names the secrets, never a value, and leaves the vault empty', (_what, keyring, message) => {
    const vault = new SecretVault();
    const error = catchError(() => new TaskSecrets(vault, keyring).open('task_1', sealed));
    expect(error).toBeInstanceOf(SecretsUnavailableError);
    expect(error).toMatchObject({ code: 'SECRETS.UNAVAILABLE', names: ['TOKEN', 'OTHER'] });
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).toContain('The turn stopped so that nothing runs with these variables empty.');
    for (const value of Object.values(SECRETS)) expect((error as Error).message).not.toContain(value);
    expect(vault.has('task_1')).toBe(false);
  });

  it('refuses the envelope of another task', () => {
    const error = catchError(() => new TaskSecrets(new SecretVault(), new SecretsKeyring(key)).open('task_2', sealed));
    expect((error as Error).message).toMatch(/^Secrets TOKEN, OTHER cannot be opened: the sealed secrets are not valid/);
  });

  it('redacts text of a task whose secrets it had not opened yet, opening them from the task', () => {
    const secrets = new TaskSecrets(new SecretVault(), new SecretsKeyring(key));
    expect(secrets.redact('task_1', 'p-tok-0123456789: a FIFO')).toBe('p-tok-0123456789: a FIFO');
    expect(secrets.redact('task_1', 'p-tok-0123456789: a FIFO', sealed)).toBe('p-[REDACTED:TOKEN]: a FIFO');
    expect(new TaskSecrets(new SecretVault(), new SecretsKeyring(generateSecretsKey())).redact('task_1', 'x', sealed)).toBe('x');
  });

  it('says a task from before durable secrets has lost them', () => {
    const error = catchError(() => new TaskSecrets(new SecretVault(), new SecretsKeyring(key)).open('task_1', { secretNames: ['TOKEN'] }));
    expect(error).toBeInstanceOf(SecretsUnavailableError);
    expect((error as Error).message).toMatch(/^Secrets TOKEN cannot be used: this task was created before secrets were durable/);
  });
});
