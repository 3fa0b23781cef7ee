const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Whether JSON text nests objects and arrays deeper than `maxDepth`, found in one pass without
 * parsing: JSON.parse copes with deep nesting but every recursive walk after it (class-transformer,
 * validators) overflows the stack. Brackets inside strings do not count. The text need not be
 * valid JSON; the parser judges that afterwards. UTF-8 bytes work as well as a string, since no
 * byte of a multi-byte character is ASCII.
 */
export function exceedsJsonDepth(text: string | Buffer, maxDepth: number): boolean {
  const bytes = typeof text === 'string' ? Buffer.from(text) : text;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i];
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > maxDepth) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}

/** The same bound for a value already parsed (a multipart part sent as application/json), walked without recursion. */
export function exceedsValueDepth(value: unknown, maxDepth: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (item === null || typeof item !== 'object') continue;
    if (depth + 1 > maxDepth) return true;
    for (const inner of Object.values(item)) stack.push([inner, depth + 1]);
  }
  return false;
}
