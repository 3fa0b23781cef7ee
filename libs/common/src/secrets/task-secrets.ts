import type { SecretEnvelope, SecretsKeyring } from './secret-envelope';
import { SecretsCryptoError } from './secret-envelope';
import type { SecretVault } from './secret-vault';

/** What a process knows of a task's secrets from its events (TaskCreated). */
export interface SealedTaskSecrets {
  readonly secretNames: readonly string[];
  /** Absent on tasks created before secrets were durable. */
  readonly sealedSecrets?: SecretEnvelope;
}

/**
 * A task's secrets cannot be used by this process: no key, a wrong key, an altered envelope, or a
 * task from before secrets were durable. The message names the secrets, never their values.
 */
export class SecretsUnavailableError extends Error {
  readonly code = 'SECRETS.UNAVAILABLE';
  constructor(
    readonly names: readonly string[],
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'SecretsUnavailableError';
  }
}

/** How a turn that cannot have its secrets ends: said once here, so every process says the same. */
const STOPPED = 'The turn stopped so that nothing runs with these variables empty.';

/**
 * The one way a process gets a task's plain secrets: from its in-memory vault, or else by opening
 * the envelope in the task's events with this process's key (then kept in the vault). Values exist
 * in plain text only in memory; everything stored or sent carries the envelope.
 */
export class TaskSecrets {
  constructor(
    readonly vault: SecretVault,
    private readonly keyring: SecretsKeyring,
  ) {}

  /** Whether this process can seal new secrets (it has a SECRETS_KEY). */
  get canSeal(): boolean {
    return this.keyring.canSeal;
  }

  seal(taskId: string, secrets: Readonly<Record<string, string>>): SecretEnvelope {
    return this.keyring.seal(taskId, secrets);
  }

  /** The task's secrets (`{}` for a task without any); a SecretsUnavailableError when they cannot be opened. */
  open(taskId: string, task: SealedTaskSecrets): Readonly<Record<string, string>> {
    if (task.secretNames.length === 0) return {};
    const known = this.vault.get(taskId);
    if (known) return known;
    const list = task.secretNames.join(', ');
    if (!task.sealedSecrets) {
      throw new SecretsUnavailableError(
        task.secretNames,
        `Secrets ${list} cannot be used: this task was created before secrets were durable (they were kept in memory only and are gone). ` +
          `${STOPPED} Create a new task to supply them again.`,
      );
    }
    let secrets: Record<string, string>;
    try {
      secrets = this.keyring.open(taskId, task.sealedSecrets);
    } catch (error) {
      if (!(error instanceof SecretsCryptoError)) throw error;
      throw new SecretsUnavailableError(task.secretNames, `Secrets ${list} cannot be opened: ${error.message}. ${STOPPED}`, {
        cause: error,
      });
    }
    const opened = Object.keys(secrets).sort().join(',');
    if (opened !== [...task.secretNames].sort().join(',')) {
      throw new SecretsUnavailableError(
        task.secretNames,
        `Secrets ${list} cannot be opened: the sealed secrets hold other names. ${STOPPED}`,
      );
    }
    this.vault.put(taskId, secrets);
    return secrets;
  }

  /**
   * Redacts a task's text; a process that has not opened the task's secrets yet (a workspace left
   * from before a restart, snapshotted before any call) opens them from `task` first. Secrets that
   * cannot be opened are not known here, so nothing of them can be masked.
   */
  redact(taskId: string, text: string, task?: SealedTaskSecrets): string {
    if (task && !this.vault.has(taskId)) {
      try {
        this.open(taskId, task);
      } catch (error) {
        if (!(error instanceof SecretsUnavailableError)) throw error;
      }
    }
    return this.vault.redact(taskId, text);
  }
}
