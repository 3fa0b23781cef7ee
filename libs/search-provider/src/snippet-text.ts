const NAMED_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/**
 * Plain text from a provider's title or snippet: Brave marks matches with `<strong>` and escapes
 * quotes as `&#x27;`, others send plain text. Tags go, entities are decoded, whitespace collapses,
 * and the text is cut at `maxChars`.
 */
export function snippetText(raw: unknown, maxChars: number): string {
  if (typeof raw !== 'string') return '';
  const text = raw
    .replace(/<[^>]*>/g, '')
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (entity, body: string) => decodeEntity(body) ?? entity)
    .replace(/\s+/g, ' ')
    .trim();
  return text.length > maxChars ? `${text.slice(0, maxChars - 1).trimEnd()}…` : text;
}

function decodeEntity(body: string): string | undefined {
  if (body[0] !== '#') return NAMED_ENTITIES[body.toLowerCase()];
  const code = body[1] === 'x' || body[1] === 'X' ? parseInt(body.slice(2), 16) : parseInt(body.slice(1), 10);
  return Number.isInteger(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : undefined;
}
