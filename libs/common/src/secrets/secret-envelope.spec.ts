import type { SecretEnvelope } from './secret-envelope';
import {
  SecretsEnvelopeInvalidError,
  SecretsKeyMismatchError,
  SecretsKeyMissingError,
  SecretsKeyring,
  generateSecretsKey,
  parseSecretsKey,
  secretsKeyId,
} from './secret-envelope';
import { catchError } from '../testing/catch-error';

const SECRETS = { TOKEN: 'tok-0123456789', PASSWORD: 'p@ss wörd/+"\n' };

/** Flips one bit of a base64 field, at `index` bytes in. */
function flipBit(field: string, index: number): string {
  const bytes = Buffer.from(field, 'base64');
  bytes[index] ^= 0x01;
  return bytes.toString('base64');
}

describe('secret envelope (AES-256-GCM, a data key per task wrapped by SECRETS_KEY)', () => {
  const key = generateSecretsKey();
  const keyring = new SecretsKeyring(key);

  it('seals and opens the secrets of a task', () => {
    const envelope = keyring.seal('task_1', SECRETS);
    expect(keyring.open('task_1', envelope)).toEqual(SECRETS);
  });

  it('records the version and the key id (a SHA-256 fingerprint of the key), never the key or a value', () => {
    const envelope = keyring.seal('task_1', SECRETS);
    expect(envelope.version).toBe(1);
    expect(envelope.keyId).toBe(secretsKeyId(key.bytes));
    expect(envelope.keyId).toMatch(/^[0-9a-f]{16}$/);
    const text = JSON.stringify(envelope);
    for (const value of [
      ...Object.values(SECRETS),
      key.bytes.toString('base64'),
      ...Object.values(SECRETS).map((v) => Buffer.from(v).toString('base64')),
    ]) {
      expect(text).not.toContain(value);
    }
  });

  it('uses a fresh data key and IVs each time: the same secrets never seal to the same bytes', () => {
    const a = keyring.seal('task_1', SECRETS);
    const b = keyring.seal('task_1', SECRETS);
    expect(a.wrappedKey).not.toBe(b.wrappedKey);
    expect(a.ciphertext).not.toBe(b.ciphertext);
  });

  it('refuses a wrong key with a typed key-mismatch error naming both key ids', () => {
    const envelope = keyring.seal('task_1', SECRETS);
    const other = new SecretsKeyring(generateSecretsKey());
    const error = catchError(() => other.open('task_1', envelope));
    expect(error).toBeInstanceOf(SecretsKeyMismatchError);
    expect(error).toMatchObject({ code: 'SECRETS.KEY_MISMATCH', envelopeKeyId: key.id, knownKeyIds: [other.current!.id] });
  });

  it('refuses a wrong key that claims the right key id (a forged id) as an invalid envelope', () => {
    const envelope = keyring.seal('task_1', SECRETS);
    const wrong = generateSecretsKey();
    const impostor = new SecretsKeyring({ id: key.id, bytes: wrong.bytes });
    expect(catchError(() => impostor.open('task_1', envelope))).toBeInstanceOf(SecretsEnvelopeInvalidError);
  });

  it('refuses to seal or open without any key', () => {
    const none = new SecretsKeyring(undefined);
    expect(none.canSeal).toBe(false);
    expect(catchError(() => none.seal('task_1', SECRETS))).toBeInstanceOf(SecretsKeyMissingError);
    expect(catchError(() => none.open('task_1', keyring.seal('task_1', SECRETS)))).toMatchObject({ code: 'SECRETS.KEY_MISSING' });
  });

  it.each([
    ['a bit of the ciphertext flipped', (e: SecretEnvelope) => ({ ...e, ciphertext: flipBit(e.ciphertext, 20) })],
    [
      'a bit of the ciphertext tag flipped',
      (e: SecretEnvelope) => ({ ...e, ciphertext: flipBit(e.ciphertext, Buffer.from(e.ciphertext, 'base64').length - 1) }),
    ],
    ['a bit of the ciphertext IV flipped', (e: SecretEnvelope) => ({ ...e, ciphertext: flipBit(e.ciphertext, 0) })],
    ['a bit of the wrapped key flipped', (e: SecretEnvelope) => ({ ...e, wrappedKey: flipBit(e.wrappedKey, 20) })],
    [
      'the ciphertext cut short',
      (e: SecretEnvelope) => ({ ...e, ciphertext: Buffer.from(e.ciphertext, 'base64').subarray(0, 20).toString('base64') }),
    ],
    ['the wrapped key emptied', (e: SecretEnvelope) => ({ ...e, wrappedKey: '' })],
    [
      'the wrapped key of another envelope swapped in',
      (e: SecretEnvelope) => ({ ...e, wrappedKey: keyring.seal('task_1', SECRETS).wrappedKey }),
    ],
  ])('refuses a tampered envelope: %s', (_what, tamper) => {
    const error = catchError(() => keyring.open('task_1', tamper(keyring.seal('task_1', SECRETS))));
    expect(error).toBeInstanceOf(SecretsEnvelopeInvalidError);
    expect(error).toMatchObject({ code: 'SECRETS.ENVELOPE_INVALID' });
  });

  it('refuses an envelope copied into another task (the task id is the associated data)', () => {
    const envelope = keyring.seal('task_1', SECRETS);
    expect(catchError(() => keyring.open('task_2', envelope))).toBeInstanceOf(SecretsEnvelopeInvalidError);
  });

  it('refuses an envelope version it does not know', () => {
    const envelope = { ...keyring.seal('task_1', SECRETS), version: 2 };
    expect(catchError(() => keyring.open('task_1', envelope))).toBeInstanceOf(SecretsEnvelopeInvalidError);
  });

  it('never puts a secret value in an error message', () => {
    const envelope = keyring.seal('task_1', SECRETS);
    const errors = [
      catchError(() => keyring.open('task_2', envelope)),
      catchError(() => new SecretsKeyring(generateSecretsKey()).open('task_1', envelope)),
      catchError(() => keyring.open('task_1', { ...envelope, ciphertext: flipBit(envelope.ciphertext, 20) })),
    ];
    for (const error of errors) for (const value of Object.values(SECRETS)) expect(String((error as Error).message)).not.toContain(value);
  });

  describe('rotation', () => {
    const old = generateSecretsKey();
    const sealedWithOld = new SecretsKeyring(old).seal('task_1', SECRETS);
    const next = generateSecretsKey();
    const rotated = new SecretsKeyring(next, [old]);

    it('opens envelopes of a previous key by their key id', () => {
      expect(rotated.open('task_1', sealedWithOld)).toEqual(SECRETS);
    });

    it('seals new envelopes with the current key only', () => {
      const envelope = rotated.seal('task_1', SECRETS);
      expect(envelope.keyId).toBe(next.id);
      expect(new SecretsKeyring(next).open('task_1', envelope)).toEqual(SECRETS);
      expect(catchError(() => new SecretsKeyring(old).open('task_1', envelope))).toBeInstanceOf(SecretsKeyMismatchError);
    });

    it('lists the current key id first', () => {
      expect(rotated.keyIds).toEqual([next.id, old.id]);
    });

    it('no longer opens envelopes of a key dropped from the previous keys', () => {
      expect(catchError(() => new SecretsKeyring(next).open('task_1', sealedWithOld))).toBeInstanceOf(SecretsKeyMismatchError);
    });
  });

  describe('parseSecretsKey', () => {
    it('reads 32 bytes of base64, with surrounding whitespace', () => {
      const parsed = parseSecretsKey(`  ${key.bytes.toString('base64')}\n`, 'SECRETS_KEY');
      expect(parsed).toEqual({ id: key.id, bytes: key.bytes });
    });

    it('reads base64url too', () => {
      expect(parseSecretsKey(key.bytes.toString('base64url'), 'SECRETS_KEY').id).toBe(key.id);
    });

    it.each([
      ['too short', Buffer.alloc(16, 1).toString('base64')],
      ['too long', Buffer.alloc(48, 1).toString('base64')],
      ['not base64', 'this is not a key at all, not at all!!'],
      ['empty', ''],
    ])('refuses a key that is %s, naming the variable and never echoing the value', (_what, value) => {
      const error = catchError(() => parseSecretsKey(value, 'SECRETS_KEY'));
      expect((error as Error).message).toMatch(/^SECRETS_KEY must be 32 random bytes in base64/);
      if (value) expect((error as Error).message).not.toContain(value);
    });
  });
});
