// Per-task secrets in plain text, in this process's memory only: nothing here is ever written
// anywhere. A restart forgets them; TaskSecrets opens them again from the task's sealed envelope.

export const MIN_SECRET_LENGTH = 4;
/** A cut-off tail this long that starts a secret is masked; a single character reveals nothing. */
const MIN_MASKED_PREFIX = 2;

interface Pattern {
  readonly needle: string;
  readonly replacement: string;
}

export class SecretVault {
  private readonly secrets = new Map<string, Readonly<Record<string, string>>>();
  private readonly patterns = new Map<string, Pattern[]>();

  put(taskId: string, secrets: Readonly<Record<string, string>>): void {
    if (Object.keys(secrets).length === 0) return;
    this.secrets.set(taskId, { ...secrets });
    this.patterns.set(taskId, patternsFor(secrets));
  }

  get(taskId: string): Readonly<Record<string, string>> | undefined {
    return this.secrets.get(taskId);
  }

  has(taskId: string): boolean {
    return this.secrets.has(taskId);
  }

  forget(taskId: string): void {
    this.secrets.delete(taskId);
    this.patterns.delete(taskId);
  }

  /** Replaces every form of every secret of the task by `[REDACTED:NAME]`. */
  redact(taskId: string, text: string): string {
    const patterns = this.patterns.get(taskId);
    if (!patterns) return text;
    let out = text;
    for (const p of patterns) out = out.split(p.needle).join(p.replacement);
    return out;
  }

  /**
   * Redacts output that was cut off at its end (a size limit): besides every whole occurrence, a
   * tail that is the beginning of a secret is masked too, so truncation never shows part of one.
   */
  redactCutOutput(taskId: string, text: string): string {
    const patterns = this.patterns.get(taskId);
    if (!patterns) return text;
    const out = this.redact(taskId, text);
    for (const p of patterns) {
      for (let length = Math.min(p.needle.length - 1, out.length); length >= MIN_MASKED_PREFIX; length--) {
        if (out.endsWith(p.needle.slice(0, length))) return `${out.slice(0, out.length - length)}${p.replacement}`;
      }
    }
    return out;
  }

  /** Redacts every string inside a JSON-like value. */
  redactDeep<T>(taskId: string, value: T): T {
    if (!this.patterns.has(taskId)) return value;
    return mapStrings(value, (s) => this.redact(taskId, s)) as T;
  }
}

/** Plain, base64 and URL-encoded forms; longest first so a longer form is never half-replaced. */
function patternsFor(secrets: Readonly<Record<string, string>>): Pattern[] {
  const out: Pattern[] = [];
  for (const [name, value] of Object.entries(secrets)) {
    const replacement = `[REDACTED:${name}]`;
    const forms = new Set([
      value,
      Buffer.from(value).toString('base64'),
      Buffer.from(value).toString('base64url'),
      encodeURIComponent(value),
    ]);
    for (const needle of forms) if (needle.length > 0) out.push({ needle, replacement });
  }
  return out.sort((a, b) => b.needle.length - a.needle.length);
}

function mapStrings(value: unknown, fn: (s: string) => string): unknown {
  if (typeof value === 'string') return fn(value);
  if (Array.isArray(value)) return value.map((v) => mapStrings(v, fn));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapStrings(v, fn)]));
  }
  return value;
}
