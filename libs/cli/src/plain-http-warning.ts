/**
 * The API key travels in every request's Authorization header: over plain http to another
 * machine anyone on the path can read it. Loopback is fine (the default, `npm start` on this
 * machine); anything else over http gets a warning on stderr, not a refusal (a trusted private
 * network is the user's call).
 */
export function plainHttpWarning(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined; // the client reports a bad URL itself
  }
  if (parsed.protocol !== 'http:' || isLoopback(parsed.hostname)) return undefined;
  return `ats: warning: ${parsed.host} is reached over plain http: the API key can be read on the way; use https`;
}

function isLoopback(hostname: string): boolean {
  const host = hostname.toLowerCase();
  return host === 'localhost' || host.endsWith('.localhost') || host === '[::1]' || /^127(\.\d{1,3}){3}$/.test(host);
}
