import type { TaskSecrets } from '@app/common';
import { SecretsUnavailableError } from '@app/common';
import type { WebhookOutbox } from '@app/webhooks';

/** A message's payload with every form of the task's secrets masked, as tool output is. */
export function redactedPayload<T>(secrets: TaskSecrets, taskId: string, outbox: WebhookOutbox, payload: T): T {
  if (outbox.secrets && outbox.secrets.secretNames.length > 0) {
    try {
      secrets.open(taskId, outbox.secrets);
    } catch (error) {
      // Secrets this process cannot open are not known here, so nothing of them can be masked.
      if (!(error instanceof SecretsUnavailableError)) throw error;
    }
  }
  return secrets.vault.redactDeep(taskId, payload);
}
