import { SecretVault } from '@app/common';
import { ExecResult, SandboxProvider } from '../provider/sandbox-provider.port';

/**
 * How the shell tool runs a command: in the task's sandbox, with the task's env and its secrets
 * (opened by the caller, never a silent empty set; secrets win on a name clash) as environment
 * variables, and the output redacted before it leaves this function. Output cut at the size
 * limit may end in the first characters of a secret, so it is redacted with that in mind.
 */
export function commandRunner(
  provider: SandboxProvider,
  vault: SecretVault,
  taskId: string,
  env: Readonly<Record<string, string>>,
  secrets: Readonly<Record<string, string>>,
  signal?: AbortSignal,
) {
  return async (command: string, timeoutMs: number | undefined): Promise<ExecResult> => {
    const result = await provider.exec(taskId, {
      command,
      env: { ...env, ...secrets },
      signal,
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
    });
    const output = result.truncated ? vault.redactCutOutput(taskId, result.output) : vault.redact(taskId, result.output);
    return { ...result, output };
  };
}
