/**
 * Per-tenant request budget (docs/design.md#security): a token bucket holding a minute's worth of requests,
 * refilled continuously, so a client may burst up to the limit and then gets `perMinute` a minute.
 * One bucket per tenant; tenants are bounded by the configured keys.
 */
export interface RateLimiter {
  /** Takes one request from the tenant's budget; when empty, how long until the next one. */
  take(tenantId: string): { allowed: true } | { allowed: false; retryAfterMs: number };
}

export function createRateLimiter(perMinute: number, now: () => number = Date.now): RateLimiter {
  const perMs = perMinute / 60_000;
  const buckets = new Map<string, { tokens: number; at: number }>();
  return {
    take(tenantId) {
      const t = now();
      const bucket = buckets.get(tenantId) ?? { tokens: perMinute, at: t };
      bucket.tokens = Math.min(perMinute, bucket.tokens + (t - bucket.at) * perMs);
      bucket.at = t;
      buckets.set(tenantId, bucket);
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1;
        return { allowed: true };
      }
      return { allowed: false, retryAfterMs: Math.ceil((1 - bucket.tokens) / perMs) };
    },
  };
}
