// The rate limit's window math, pure: what the limiter stores per tenant and whether one more
// request fits. The window is cut into SLOTS equal slots and a request is counted in the slot of
// its arrival; each slot also keeps the time of its latest request. A slot counts until that
// latest request is one window old, so every request in it counts for at least a whole window
// and no span of `windowMs` ever holds more than `limit` admitted requests. A refused caller is
// told when the slot that frees room leaves: never more than one window away (the latest request
// is at most now), and at worst a slot, a second of a minute, later than an exact log would say.
// Constant size, unlike a log of timestamps, so a high limit costs no more to store than a low one.

export const SLOTS = 60;

export interface WindowPolicy {
  /** Requests admitted per window. */
  readonly limit: number;
  readonly windowMs: number;
}

/** `[slot number, requests admitted in it, time of the latest of them]`, oldest first; only slots that still count. */
export type SlotCounts = readonly (readonly [number, number, number])[];

export type Admission =
  { readonly allowed: true; readonly counts: SlotCounts } | { readonly allowed: false; readonly retryAfterMs: number };

export function admit(counts: SlotCounts, nowMs: number, policy: WindowPolicy): Admission {
  const current = Math.floor(nowMs / (policy.windowMs / SLOTS));
  // A slot from a later clock (another API instance's) is dropped, as one from before the window is.
  const live = counts.filter(([slot, , latestMs]) => slot <= current && latestMs > nowMs - policy.windowMs);
  const total = live.reduce((sum, [, n]) => sum + n, 0);
  if (total < policy.limit) {
    const last = live.at(-1);
    const next: SlotCounts =
      last?.[0] === current ? [...live.slice(0, -1), [current, last[1] + 1, Math.max(last[2], nowMs)]] : [...live, [current, 1, nowMs]];
    return { allowed: true, counts: next };
  }
  // The oldest slots drop out one by one; the request fits once enough of them have.
  let remaining = total;
  for (const [, n, latestMs] of live) {
    remaining -= n;
    if (remaining < policy.limit) return { allowed: false, retryAfterMs: Math.max(1, Math.ceil(latestMs + policy.windowMs - nowMs)) };
  }
  return { allowed: false, retryAfterMs: Math.ceil(policy.windowMs) }; // unreachable: the loop empties `live`
}

/**
 * What the store holds; anything unreadable counts as an empty window (it is overwritten). That
 * includes the `[slot, count]` pairs written before slots kept their latest time.
 */
export function parseSlotCounts(value: string): SlotCounts {
  try {
    const parsed: unknown = JSON.parse(value);
    if (!Array.isArray(parsed)) return [];
    return parsed
      .filter(
        (e): e is [number, number, number] =>
          Array.isArray(e) && e.length === 3 && e.every((n) => Number.isSafeInteger(n)) && (e[1] as number) > 0,
      )
      .sort((a, b) => a[0] - b[0]);
  } catch {
    return [];
  }
}

export const serializeSlotCounts = (counts: SlotCounts): string => JSON.stringify(counts);
