// Text from the service (model output, tool output, file names, error messages) is untrusted: a
// tool can print ESC sequences that would move the cursor, rewrite the screen, set the window
// title or, on some terminals, answer back into the input. Printing it raw hands the terminal to
// whoever wrote the text. Everything untrusted goes through here first.

/**
 * C0 controls except tab and newline, DEL, the C1 controls (U+0080–U+009F: 8-bit CSI, OSC, …),
 * and the bidirectional overrides and isolates that make text display in another order than it
 * reads (the "Trojan Source" trick).
 */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/** Untrusted text made safe for a terminal: each unsafe character shown as a visible escape (`\x1b`, `\u202e`). */
export function safeText(text: string): string {
  return text.replace(UNSAFE, (char) => {
    const code = char.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/** safeText for one line: newlines and tabs shown as `\n` and `\t` too. */
export function safeLine(text: string): string {
  return safeText(text).replace(/\n/g, '\\n').replace(/\t/g, '\\t');
}

/**
 * One JSON line with nothing a terminal acts on: JSON.stringify escapes C0 controls already, not
 * DEL, C1 controls or the bidi characters; those become `\u` escapes, which parse back the same.
 */
export function jsonLine(value: unknown): string {
  return JSON.stringify(value).replace(
    /[\u007f-\u009f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/**
 * A value from the service with safeText applied to every string in it, however deep: for
 * printing a whole answer (a task, an event) whose fields are formatted one by one. A field the
 * document says is a number is not trusted to be one either.
 */
export function safeData<T>(value: T): T {
  if (typeof value === 'string') return safeText(value) as T;
  if (Array.isArray(value)) return value.map(safeData) as T;
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, field]) => [safeText(key), safeData(field)])) as T;
  }
  return value;
}
