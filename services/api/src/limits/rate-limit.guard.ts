import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { RateLimitedError } from '@app/common';
import { AuthenticatedRequest } from '../auth/api-key.guard';
import { TENANT_RATE_LIMIT } from './limits.tokens';
import { TenantRateLimit } from './rate-limiter';

/**
 * RATE_LIMIT_PER_MINUTE on the routes that start work (create, follow-up): runs after
 * ApiKeyGuard, so the request counts against its tenant. Every such request that gets past
 * authentication counts, whatever its answer; a refused one does not.
 */
@Injectable()
export class RateLimitGuard implements CanActivate {
  constructor(@Inject(TENANT_RATE_LIMIT) private readonly limit: TenantRateLimit) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const { tenantId } = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const decision = await this.limit.take(tenantId);
    if (decision.allowed) return true;
    const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
    throw new RateLimitedError(
      `Rate limit reached: too many task creates and follow-ups for this tenant (RATE_LIMIT_PER_MINUTE); retry in ${seconds} s`,
      seconds,
    );
  }
}
