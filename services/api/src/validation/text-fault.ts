/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const MAX_KEY_IN_MESSAGE = 100;

/**
 * Why a string cannot be taken as text, or undefined. A NUL is refused because PostgreSQL (the
 * event store) rejects it in text and jsonb and it cannot pass through argv or the environment;
 * a lone UTF-16 surrogate because it has no UTF-8 form, so it could not be stored either.
 */
export function textFault(text: string): string | undefined {
  if (text.includes('\0')) return 'must not contain a NUL character';
  if (LONE_SURROGATE.test(text)) return 'must not contain a lone UTF-16 surrogate (not valid Unicode)';
  return undefined;
}

/**
 * The first string in `value` (itself, or any key or string inside its objects and arrays) that
 * is not text, as `<path> <why>`, e.g. `mcpServers.docs.headers.X-Key must not contain a NUL
 * character`. Recursion is bounded by the JSON depth limit the body parser enforces.
 */
export function findTextFault(value: unknown, path: string): string | undefined {
  if (typeof value === 'string') {
    const fault = textFault(value);
    return fault && `${path} ${fault}`;
  }
  if (value === null || typeof value !== 'object') return undefined;
  for (const [key, inner] of Object.entries(value)) {
    const keyFault = textFault(key);
    if (keyFault) return `${path}: key "${cut(key)}" ${keyFault}`;
    const found = findTextFault(inner, `${path}.${cut(key)}`);
    if (found) return found;
  }
  return undefined;
}

/** Names quoted in messages are cut: a hostile key may be megabytes long. */
export function cut(name: string, max = MAX_KEY_IN_MESSAGE): string {
  return name.length > max ? `${name.slice(0, max)}…` : name;
}
