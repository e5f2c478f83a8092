import { meaningOf, ProviderError } from '../../domain/errors.js';
import type { Clock } from '../../domain/ports.js';
import { parkedError } from '../errors.js';
import { deadlineOf } from './deadline.js';

/**
 * The single transport-retry layer (docs/design.md#transport-retries). Provider adapters never retry (SDKs run with
 * maxRetries 0); this loop alone decides, from the error class the adapter assigned:
 * rate limits and overload honour the server's retry-after, timeouts, connection failures and
 * other 5xx back off exponentially with jitter, everything else fails at once. Retries never
 * consume a reflection attempt. The deadline signal caps every wait, and a server that asks for
 * a longer wait than the call has left (the earliest of node and workflow deadline) gets its
 * answer at once: sleeping until the deadline would only turn its rate limit into a timeout.
 */
export type RetryReason = 'rate_limit' | 'timeout';

export interface RetryPolicy {
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /**
   * Scaled out, LEASE_MS: a wait longer than this gives the run up (RUN_PARKED) to resume at its
   * time, instead of holding a lease and a running place asleep. Undefined: every wait is slept.
   */
  parkAfterMs?: number | undefined;
}

export interface RetryNotice {
  reason: RetryReason;
  delayMs: number;
  /** The attempt that failed (1-based). */
  attempt: number;
  error: ProviderError;
}

/**
 * A transport retry is recorded as `rate_limit` or `timeout` (docs/design.md#transport-retries), as ERROR_CODES says
 * of its code.
 */
export function retryReason(error: ProviderError): RetryReason {
  return meaningOf(error.code).retryReason === 'rate_limit' ? 'rate_limit' : 'timeout';
}

export function backoffDelay(policy: RetryPolicy, failedAttempt: number, random: () => number): number {
  const exponential = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (failedAttempt - 1));
  // "Equal jitter": keeps at least half the delay so retries still spread out under load.
  return Math.round(exponential / 2 + (random() * exponential) / 2);
}

export async function callWithRetry<T>(
  call: () => Promise<T>,
  options: {
    policy: RetryPolicy;
    signal: AbortSignal;
    clock: Clock;
    /** Runs before a retry is announced; throwing stops the retries (a spent request budget). */
    beforeRetry?: () => void;
    onRetry: (notice: RetryNotice) => void;
    random?: () => number;
  },
): Promise<T> {
  const { policy, signal, clock } = options;
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      if (!(err instanceof ProviderError) || !err.retryable || attempt >= policy.maxAttempts) throw err;
      const left = deadlineOf(signal) - clock.now();
      if (err.retryAfterMs !== undefined && err.retryAfterMs > left) throw pastDeadline(err, left);
      const delayMs = err.retryAfterMs ?? backoffDelay(policy, attempt, options.random ?? Math.random);
      options.beforeRetry?.();
      options.onRetry({ reason: retryReason(err), delayMs, attempt, error: err });
      if (policy.parkAfterMs !== undefined && delayMs > policy.parkAfterMs) throw parkedError(clock.now() + delayMs);
      await clock.sleep(delayMs, signal);
    }
  }
}

/** The server's own error, saying why it was not waited for; `retryAfterMs` goes into its details. */
function pastDeadline(err: ProviderError, leftMs: number): ProviderError {
  const message = `${err.message} (the server asks to wait ${err.retryAfterMs} ms; the call's deadline is ${Math.max(0, Math.round(leftMs))} ms away)`;
  return new ProviderError(err.kind, message, {
    httpStatus: err.httpStatus,
    retryAfterMs: err.retryAfterMs,
    cause: err,
  });
}
