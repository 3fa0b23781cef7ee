/** The TenantRateLimit of this API instance: a RateLimiter, or UNLIMITED when RATE_LIMIT_PER_MINUTE is unset. */
export const TENANT_RATE_LIMIT = Symbol('TENANT_RATE_LIMIT');
