import { createHash } from 'node:crypto';

// How a test sees that a secret reached a task's commands without the value ever being shown:
// the command prints the value, which the service must redact, and its SHA-256, which it does
// not, so the digest proves the exact value arrived.

/** A shell command printing `NAME=<the value>` (to be redacted) and the value's SHA-256. */
export const secretProbeCommand = (name: string): string => `echo "${name}=$${name}"; printf %s "$${name}" | sha256sum`;

/** What the probe's output holds once redacted: the value's marker and its SHA-256. */
export const secretProbeOutput = (name: string, value: string): string[] => [
  `${name}=[REDACTED:${name}]`,
  createHash('sha256').update(value).digest('hex'),
];

/** The forms of a value the service redacts (docs/api.md "Secrets and env"): none may be shown. */
export const secretForms = (value: string): string[] => [value, Buffer.from(value).toString('base64'), encodeURIComponent(value)];
