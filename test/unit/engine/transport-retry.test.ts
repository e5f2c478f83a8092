import { describe, expect, it } from 'vitest';
import { AppError, ProviderError } from '../../../src/domain/errors.js';
import type { Clock } from '../../../src/domain/ports.js';
import { backoffDelay, callWithRetry, type RetryNotice } from '../../../src/engine/transport-retry.js';

function recordingClock(): Clock & { slept: number[] } {
  const slept: number[] = [];
  return {
    slept,
    now: () => 0,
    async sleep(ms, signal) {
      if (signal?.aborted) throw signal.reason;
      slept.push(ms);
    },
  };
}

const policy = { maxAttempts: 4, baseDelayMs: 1000, maxDelayMs: 30_000 };

function failing(errors: Error[], value = 'ok') {
  let calls = 0;
  const call = async () => {
    const error = errors[calls++];
    if (error) throw error;
    return value;
  };
  return { call, calls: () => calls };
}

describe('callWithRetry', () => {
  it('honours retry-after for rate limits and reports the reason', async () => {
    const clock = recordingClock();
    const notices: RetryNotice[] = [];
    const { call, calls } = failing([
      new ProviderError('rate_limit', '429', { retryAfterMs: 250 }),
      new ProviderError('overloaded', '529', { retryAfterMs: 40 }),
    ]);
    const signal = new AbortController().signal;
    await expect(callWithRetry(call, { policy, signal, clock, onRetry: (n) => notices.push(n) })).resolves.toBe('ok');
    expect(calls()).toBe(3);
    expect(clock.slept).toEqual([250, 40]);
    expect(notices.map((n) => n.reason)).toEqual(['rate_limit', 'rate_limit']);
  });

  it('backs off exponentially with jitter for 5xx, timeouts and connection errors', async () => {
    const clock = recordingClock();
    const { call } = failing([
      new ProviderError('server', '500'),
      new ProviderError('timeout', 't'),
      new ProviderError('connection', 'c'),
    ]);
    const notices: RetryNotice[] = [];
    const signal = new AbortController().signal;
    await callWithRetry(call, { policy, signal, clock, onRetry: (n) => notices.push(n), random: () => 1 });
    expect(clock.slept).toEqual([1000, 2000, 4000]);
    expect(notices.every((n) => n.reason === 'timeout')).toBe(true);
  });

  it('fails fast on authentication, permission, quota and invalid requests', async () => {
    for (const kind of ['authentication', 'permission', 'quota', 'invalid_request'] as const) {
      const clock = recordingClock();
      const { call, calls } = failing([new ProviderError(kind, kind)]);
      const signal = new AbortController().signal;
      await expect(callWithRetry(call, { policy, signal, clock, onRetry: () => {} })).rejects.toMatchObject({ kind });
      expect(calls()).toBe(1);
      expect(clock.slept).toEqual([]);
    }
  });

  it('gives up after maxAttempts in total', async () => {
    const clock = recordingClock();
    const { call, calls } = failing(Array.from({ length: 10 }, () => new ProviderError('server', '503')));
    const signal = new AbortController().signal;
    await expect(callWithRetry(call, { policy, signal, clock, onRetry: () => {} })).rejects.toBeInstanceOf(
      ProviderError,
    );
    expect(calls()).toBe(4);
  });

  it('stops with the signal reason once aborted', async () => {
    const controller = new AbortController();
    const reason = new AppError('NODE_TIMEOUT', 'deadline');
    const clock = recordingClock();
    const call = async () => {
      controller.abort(reason);
      throw new ProviderError('server', '500');
    };
    await expect(callWithRetry(call, { policy, signal: controller.signal, clock, onRetry: () => {} })).rejects.toBe(
      reason,
    );
  });

  it('caps exponential delays at maxDelayMs and keeps at least half', () => {
    expect(backoffDelay(policy, 10, () => 1)).toBe(30_000);
    expect(backoffDelay(policy, 1, () => 0)).toBe(500);
  });
});
