// Shared by every adapter: models of any protocol send tool arguments as JSON text or an object.

/** `{}` for no arguments; JSON that is not an object is kept verbatim as `{ _raw }`. */
export function parseToolArguments(raw: unknown): Record<string, unknown> {
  if (raw === undefined || raw === null) return {};
  if (typeof raw === 'object' && !Array.isArray(raw)) return raw as Record<string, unknown>;
  const text = typeof raw === 'string' ? raw : JSON.stringify(raw);
  if (text.trim() === '') return {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) {
      return parsed as Record<string, unknown>;
    }
  } catch {
    // Models do emit broken JSON; the agent loop shows `_raw` back to the model to fix it.
  }
  return { _raw: text };
}
