import type { SecretVault } from '@app/common';
import type { ExecResult, SandboxProvider } from '../provider/sandbox-provider.port';

/** What a task's commands run with, from its events. */
export interface CommandSetting {
  readonly env: Readonly<Record<string, string>>;
  readonly secrets: Readonly<Record<string, string>>;
  /** The task's `network.allow`; absent: SANDBOX_EGRESS_ALLOW. */
  readonly egressAllow?: readonly string[];
}

/**
 * How the shell tool runs a command: in the task's sandbox, with the task's env and its secrets
 * (opened by the caller, never a silent empty set; secrets win on a name clash) as environment
 * variables, and the output redacted before it leaves this function. Output cut at the size
 * limit may end in the first characters of a secret, so it is redacted with that in mind. The
 * hosts a command connected to are redacted too: `curl https://$TOKEN.example.com` must not put
 * the token into an `egress` event.
 */
export function commandRunner(
  provider: SandboxProvider,
  vault: SecretVault,
  taskId: string,
  setting: CommandSetting,
  signal?: AbortSignal,
) {
  const redact = (text: string) => vault.redact(taskId, text);
  return async (command: string, timeoutMs: number | undefined): Promise<ExecResult> => {
    const result = await provider.exec(taskId, {
      command,
      env: { ...setting.env, ...setting.secrets },
      signal,
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
      ...(setting.egressAllow ? { egressAllow: setting.egressAllow } : {}),
    });
    const output = result.truncated ? vault.redactCutOutput(taskId, result.output) : redact(result.output);
    const egress = result.egress?.map((r) => ({ ...r, host: redact(r.host), ...(r.reason ? { reason: redact(r.reason) } : {}) }));
    return { ...result, output, ...(egress ? { egress } : {}) };
  };
}
