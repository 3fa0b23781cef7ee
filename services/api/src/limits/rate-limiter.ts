import type { OnApplicationShutdown } from '@nestjs/common';
import { Logger } from '@nestjs/common';
import type { CoordinationStore } from '@app/coordination';
import { createHash } from 'node:crypto';
import type { WindowPolicy } from './sliding-window';
import { admit, parseSlotCounts, serializeSlotCounts } from './sliding-window';

export type RateDecision = { readonly allowed: true } | { readonly allowed: false; readonly retryAfterMs: number };

/** What the rate limit guard asks: may this tenant make one more create or follow-up now? */
export interface TenantRateLimit {
  take(tenantId: string): Promise<RateDecision>;
}

/** RATE_LIMIT_PER_MINUTE unset. */
export const UNLIMITED: TenantRateLimit = { take: async () => ({ allowed: true }) };

/** Compare-and-set rounds one request may take while other requests of its tenant win theirs. */
const MAX_ATTEMPTS = 50;

/**
 * RATE_LIMIT_PER_MINUTE: each tenant's window lives in the coordination store, so every API
 * instance counts against the same one (in memory in the all-in-one mode, a NATS JetStream KV
 * bucket in the distributed mode). Each request reads the window, decides, and writes it back
 * only if nobody wrote in between; otherwise it decides again on the newer window.
 */
export class RateLimiter implements TenantRateLimit, OnApplicationShutdown {
  private readonly logger = new Logger('RateLimiter');

  constructor(
    private readonly store: CoordinationStore,
    private readonly policy: WindowPolicy,
    private readonly now: () => number = Date.now,
  ) {}

  async take(tenantId: string): Promise<RateDecision> {
    // Tenant ids are free text; the store's keys are not. A hash keeps them apart and unreadable.
    const key = `rate.${createHash('sha256').update(tenantId).digest('hex').slice(0, 40)}`;
    try {
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        const current = await this.store.get(key);
        const decision = admit(current ? parseSlotCounts(current.value) : [], this.now(), this.policy);
        if (!decision.allowed) return decision;
        const value = serializeSlotCounts(decision.counts);
        const written = current ? await this.store.update(key, value, current.revision) : await this.store.create(key, value);
        if (written !== undefined) return { allowed: true };
        await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(50, 2 * (attempt + 1))));
      }
      // So many of the tenant's requests raced that this one never got its turn to count.
      return { allowed: false, retryAfterMs: 1_000 };
    } catch (error) {
      // The store is unreachable (NATS down): serve the request uncounted rather than fail it.
      this.logger.warn(`rate limit not applied, the coordination store failed: ${error instanceof Error ? error.message : String(error)}`);
      return { allowed: true };
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.store.close();
  }
}
