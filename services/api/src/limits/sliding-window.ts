// The rate limit's window math, pure: what the limiter stores per tenant and whether one more
// request fits. The window is cut into SLOTS equal slots and a request is counted in the slot of
// its arrival. A request is admitted only while fewer than `limit` requests sit in the current
// slot and the SLOTS slots before it; those slots reach back at least one whole window, so no
// span of `windowMs` ever holds more than `limit` admitted requests (at worst a caller waits up
// to one slot, a second of a minute, longer than an exact log would make it). Constant size,
// unlike a log of timestamps, so a high limit costs no more to store than a low one.

export const SLOTS = 60;

export interface WindowPolicy {
  /** Requests admitted per window. */
  readonly limit: number;
  readonly windowMs: number;
}

/** `[slot number, requests admitted in it]`, oldest first; only slots that still count. */
export type SlotCounts = readonly (readonly [number, number])[];

export type Admission =
  { readonly allowed: true; readonly counts: SlotCounts } | { readonly allowed: false; readonly retryAfterMs: number };

export function admit(counts: SlotCounts, nowMs: number, policy: WindowPolicy): Admission {
  const slotMs = policy.windowMs / SLOTS;
  const current = Math.floor(nowMs / slotMs);
  const live = counts.filter(([slot]) => slot >= current - SLOTS && slot <= current);
  const total = live.reduce((sum, [, n]) => sum + n, 0);
  if (total < policy.limit) {
    const last = live.at(-1);
    const next: SlotCounts = last?.[0] === current ? [...live.slice(0, -1), [current, last[1] + 1]] : [...live, [current, 1]];
    return { allowed: true, counts: next };
  }
  // The oldest slots drop out one by one; the request fits once enough of them have.
  let remaining = total;
  for (const [slot, n] of live) {
    remaining -= n;
    if (remaining < policy.limit) return { allowed: false, retryAfterMs: Math.max(1, Math.ceil((slot + SLOTS + 1) * slotMs - nowMs)) };
  }
  return { allowed: false, retryAfterMs: Math.ceil(policy.windowMs) }; // unreachable: the loop empties `live`
}

/** What the store holds; anything unreadable counts as an empty window (it is overwritten). */
export function parseSlotCounts(value: string): SlotCounts {
  try {
    const parsed: unknown = JSON.parse(value);
    if (!Array.isArray(parsed)) return [];
    return parsed
      .filter(
        (e): e is [number, number] =>
          Array.isArray(e) && e.length === 2 && Number.isSafeInteger(e[0]) && Number.isSafeInteger(e[1]) && e[1] > 0,
      )
      .sort((a, b) => a[0] - b[0]);
  } catch {
    return [];
  }
}

export const serializeSlotCounts = (counts: SlotCounts): string => JSON.stringify(counts);
