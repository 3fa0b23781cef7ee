import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

// Envelope encryption of a task's secrets (docs/operations/security.md "Secrets at rest"): a fresh random data key per
// task encrypts the JSON of the secrets with AES-256-GCM, and the key-encryption key (KEK, from
// SECRETS_KEY) wraps that data key with AES-256-GCM too. Both use the task id as associated
// data, so an envelope copied into another task's events does not open. Only the envelope is
// ever stored; the KEK stays in the processes' configuration.

export const SECRET_ENVELOPE_VERSION = 1;
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const ALGORITHM = 'aes-256-gcm';

/** A task's secrets at rest. The byte fields are base64 of `iv (12) ‖ ciphertext ‖ tag (16)`. */
export interface SecretEnvelope {
  readonly version: number;
  /** Which KEK wrapped the data key: the first 16 hex digits of the KEK's SHA-256. */
  readonly keyId: string;
  /** The task's data key, encrypted by the KEK (associated data: the task id). */
  readonly wrappedKey: string;
  /** The JSON object of the secrets, encrypted by the data key (associated data: the task id). */
  readonly ciphertext: string;
}

/** A key-encryption key and its fingerprint. */
export interface SecretsKey {
  readonly id: string;
  readonly bytes: Buffer;
}

export class SecretsCryptoError extends Error {
  constructor(
    readonly code: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'SecretsCryptoError';
  }
}

/** This process has no key-encryption key at all (SECRETS_KEY / SECRETS_KEY_FILE unset). */
export class SecretsKeyMissingError extends SecretsCryptoError {
  constructor() {
    super('SECRETS.KEY_MISSING', 'no SECRETS_KEY (or SECRETS_KEY_FILE) is set on this process');
    this.name = 'SecretsKeyMissingError';
  }
}

/** The envelope was sealed with a key this process does not have (a wrong or rotated-out key). */
export class SecretsKeyMismatchError extends SecretsCryptoError {
  constructor(
    readonly envelopeKeyId: string,
    readonly knownKeyIds: readonly string[],
  ) {
    super(
      'SECRETS.KEY_MISMATCH',
      `they were sealed with key id ${envelopeKeyId}, and this process has only key id ${knownKeyIds.join(', ')} ` +
        '(set the key they were sealed with in SECRETS_KEY or SECRETS_KEY_PREVIOUS)',
    );
    this.name = 'SecretsKeyMismatchError';
  }
}

/** The envelope does not authenticate: altered, cut, copied from another task, or of an unknown version. */
export class SecretsEnvelopeInvalidError extends SecretsCryptoError {
  constructor(reason: string, options?: ErrorOptions) {
    super('SECRETS.ENVELOPE_INVALID', `the sealed secrets are not valid: ${reason}`, options);
    this.name = 'SecretsEnvelopeInvalidError';
  }
}

/** A short, stable fingerprint of a key-encryption key: safe to log and to store. */
export const secretsKeyId = (key: Buffer): string => createHash('sha256').update(key).digest('hex').slice(0, 16);

/** Reads a 32-byte key given as base64 (or base64url); `name` says where it came from in the error, never its value. */
export function parseSecretsKey(text: string, name: string): SecretsKey {
  const trimmed = text.trim();
  const bytes = /^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed) ? Buffer.from(trimmed, 'base64') : Buffer.alloc(0);
  if (bytes.length !== KEY_BYTES) {
    throw new Error(`${name} must be ${KEY_BYTES} random bytes in base64 (e.g. the output of \`openssl rand -base64 32\`)`);
  }
  return { id: secretsKeyId(bytes), bytes };
}

export function generateSecretsKey(): SecretsKey {
  const bytes = randomBytes(KEY_BYTES);
  return { id: secretsKeyId(bytes), bytes };
}

/**
 * The key-encryption keys of this process: `current` seals every new envelope; `current` and
 * `previous` (keys rotated out, SECRETS_KEY_PREVIOUS) open envelopes by their key id.
 */
export class SecretsKeyring {
  private readonly byId = new Map<string, SecretsKey>();

  constructor(
    readonly current: SecretsKey | undefined,
    previous: readonly SecretsKey[] = [],
  ) {
    for (const key of [...previous, ...(current ? [current] : [])]) this.byId.set(key.id, key);
  }

  get canSeal(): boolean {
    return this.current !== undefined;
  }

  /** Ids of every key this keyring can open with, the current one first. */
  get keyIds(): string[] {
    return [...(this.current ? [this.current.id] : []), ...[...this.byId.keys()].filter((id) => id !== this.current?.id)];
  }

  seal(taskId: string, secrets: Readonly<Record<string, string>>): SecretEnvelope {
    if (!this.current) throw new SecretsKeyMissingError();
    const dataKey = randomBytes(KEY_BYTES);
    try {
      return {
        version: SECRET_ENVELOPE_VERSION,
        keyId: this.current.id,
        wrappedKey: encrypt(this.current.bytes, dataKey, taskId).toString('base64'),
        ciphertext: encrypt(dataKey, Buffer.from(JSON.stringify(secrets), 'utf8'), taskId).toString('base64'),
      };
    } finally {
      dataKey.fill(0);
    }
  }

  /** The secrets sealed in `envelope` for `taskId`; a typed SecretsCryptoError when they cannot be opened. */
  open(taskId: string, envelope: SecretEnvelope): Record<string, string> {
    if (envelope.version !== SECRET_ENVELOPE_VERSION)
      throw new SecretsEnvelopeInvalidError(`unknown envelope version ${String(envelope.version)}`);
    if (this.byId.size === 0) throw new SecretsKeyMissingError();
    const kek = this.byId.get(envelope.keyId);
    if (!kek) throw new SecretsKeyMismatchError(String(envelope.keyId), this.keyIds);
    const dataKey = decrypt(kek.bytes, envelope.wrappedKey, taskId, 'data key');
    try {
      if (dataKey.length !== KEY_BYTES) throw new SecretsEnvelopeInvalidError('the data key has the wrong length');
      const plain = decrypt(dataKey, envelope.ciphertext, taskId, 'secrets');
      return parseSecrets(plain);
    } finally {
      dataKey.fill(0);
    }
  }
}

function encrypt(key: Buffer, plain: Buffer, taskId: string): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv(ALGORITHM, key, iv);
  cipher.setAAD(Buffer.from(taskId, 'utf8'));
  const body = Buffer.concat([cipher.update(plain), cipher.final()]);
  return Buffer.concat([iv, body, cipher.getAuthTag()]);
}

function decrypt(key: Buffer, sealed: string, taskId: string, what: string): Buffer {
  const bytes = typeof sealed === 'string' ? Buffer.from(sealed, 'base64') : Buffer.alloc(0);
  if (bytes.length < IV_BYTES + TAG_BYTES) throw new SecretsEnvelopeInvalidError(`the ${what} are cut short`);
  const decipher = createDecipheriv(ALGORITHM, key, bytes.subarray(0, IV_BYTES));
  decipher.setAAD(Buffer.from(taskId, 'utf8'));
  decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
  try {
    return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)), decipher.final()]);
  } catch (error) {
    // GCM says only "unable to authenticate": a wrong key, altered bytes or another task's id.
    throw new SecretsEnvelopeInvalidError(`the ${what} fail authentication (altered, or sealed for another task)`, { cause: error });
  }
}

function parseSecrets(plain: Buffer): Record<string, string> {
  let value: unknown;
  try {
    value = JSON.parse(plain.toString('utf8'));
  } catch {
    // JSON.parse quotes its input in its message: never pass that on.
    value = undefined;
  } finally {
    plain.fill(0);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value) || Object.values(value).some((v) => typeof v !== 'string')) {
    throw new SecretsEnvelopeInvalidError('the secrets are not an object of strings');
  }
  return value as Record<string, string>;
}
