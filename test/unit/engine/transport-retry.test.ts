import { describe, expect, it } from 'vitest';
import { AppError, ProviderError } from '../../../src/domain/errors.js';
import type { Clock } from '../../../src/domain/ports.js';
import { type Deadline, deadlineOf, RunDeadlines } from '../../../src/engine/run/deadline.js';
import { backoffDelay, callWithRetry, type RetryNotice } from '../../../src/engine/run/transport-retry.js';

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

  it('parks the run instead of sleeping past parkAfterMs (scaled out: longer than a lease)', async () => {
    const clock = recordingClock();
    const notices: RetryNotice[] = [];
    const { call, calls } = failing([
      new ProviderError('rate_limit', '429', { retryAfterMs: 900 }),
      new ProviderError('rate_limit', '429', { retryAfterMs: 1500 }),
    ]);
    const signal = new AbortController().signal;
    const parked = callWithRetry(call, {
      policy: { ...policy, parkAfterMs: 1000 },
      signal,
      clock,
      onRetry: (n) => notices.push(n),
    });
    await expect(parked).rejects.toMatchObject({ code: 'RUN_PARKED', details: { resumeAt: 1500 } });
    // The short wait was slept; the long one was announced, not slept, and nothing was called again.
    expect(clock.slept).toEqual([900]);
    expect(calls()).toBe(2);
    expect(notices.map((n) => n.delayMs)).toEqual([900, 1500]);
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

/** The clock's time for a deadline whose own timer never fires: these tests read `deadlineOf` only. */
function withDeadline(parent: AbortSignal, ms: number | undefined, onTimeout: () => AppError, clock: Clock): Deadline {
  return new RunDeadlines(clock).within(parent, ms, onTimeout);
}

function timersOff(clock: Clock): Clock {
  return { now: () => clock.now(), sleep: () => new Promise<void>(() => {}) };
}

/** A clock whose sleeps advance its own time: nothing waits for real. */
function manualClock(start = 1_700_000_000_000): Clock & { slept: number[]; advance(ms: number): void } {
  let now = start;
  const slept: number[] = [];
  return {
    slept,
    now: () => now,
    async sleep(ms, signal) {
      if (signal?.aborted) throw signal.reason;
      slept.push(ms);
      now += ms;
    },
    advance(ms) {
      now += ms;
    },
  };
}

const nodeTimeout = () => new AppError('NODE_TIMEOUT', 'node deadline');

describe('callWithRetry: retry-after against the deadline', () => {
  it('fails at once with the rate limit when retry-after is past the deadline, retryAfterMs in details', async () => {
    const clock = manualClock();
    const deadline = withDeadline(new AbortController().signal, 4_000, nodeTimeout, timersOff(clock));
    const { call, calls } = failing([new ProviderError('rate_limit', 'HTTP 429', { retryAfterMs: 3_600_000 })]);
    const notices: RetryNotice[] = [];
    try {
      const err = await callWithRetry(call, {
        policy,
        signal: deadline.signal,
        clock,
        onRetry: (n) => notices.push(n),
      }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ProviderError);
      const failure = err as ProviderError;
      expect(failure.code).toBe('LLM_RATE_LIMIT');
      expect(failure.retryAfterMs).toBe(3_600_000);
      expect(failure.message).toContain('3600000 ms');
      expect(failure.toJSON()).toEqual({
        code: 'LLM_RATE_LIMIT',
        message: failure.message,
        details: { retryAfterMs: 3_600_000 },
      });
    } finally {
      deadline.dispose();
    }
    expect(calls()).toBe(1);
    expect(clock.slept).toEqual([]);
    expect(notices).toEqual([]);
  });

  it('waits as before when the requested wait fits before the deadline', async () => {
    const clock = manualClock();
    const deadline = withDeadline(new AbortController().signal, 4_000, nodeTimeout, timersOff(clock));
    const { call, calls } = failing([new ProviderError('rate_limit', '429', { retryAfterMs: 3_000 })]);
    await expect(callWithRetry(call, { policy, signal: deadline.signal, clock, onRetry: () => {} })).resolves.toBe(
      'ok',
    );
    deadline.dispose();
    expect(calls()).toBe(2);
    expect(clock.slept).toEqual([3_000]);
  });

  it('counts the time already spent: a wait that fitted at the start no longer does later', async () => {
    const clock = manualClock();
    const deadline = withDeadline(new AbortController().signal, 4_000, nodeTimeout, timersOff(clock));
    const { call, calls } = failing([
      new ProviderError('overloaded', '529', { retryAfterMs: 2_500 }),
      new ProviderError('overloaded', '529', { retryAfterMs: 2_500 }),
    ]);
    const err = await callWithRetry(call, { policy, signal: deadline.signal, clock, onRetry: () => {} }).catch(
      (e: unknown) => e,
    );
    deadline.dispose();
    // 2.5 s fit into 4 s once; at 2.5 s in, another 2.5 s does not.
    expect(clock.slept).toEqual([2_500]);
    expect(calls()).toBe(2);
    expect(err).toMatchObject({ code: 'LLM_OVERLOADED', retryAfterMs: 2_500 });
  });

  it('uses the earliest deadline of the chain (the workflow deadline inside a longer node deadline)', async () => {
    const clock = manualClock();
    const workflow = withDeadline(new AbortController().signal, 1_000, nodeTimeout, timersOff(clock));
    const node = withDeadline(workflow.signal, 4_000, nodeTimeout, timersOff(clock));
    const { call, calls } = failing([new ProviderError('rate_limit', '429', { retryAfterMs: 2_000 })]);
    await expect(callWithRetry(call, { policy, signal: node.signal, clock, onRetry: () => {} })).rejects.toMatchObject({
      code: 'LLM_RATE_LIMIT',
    });
    node.dispose();
    workflow.dispose();
    expect(calls()).toBe(1);
    expect(clock.slept).toEqual([]);
  });

  it('backoff without a retry-after is unchanged, deadline or not', async () => {
    const clock = manualClock();
    const deadline = withDeadline(new AbortController().signal, 100, nodeTimeout, timersOff(clock));
    const { call } = failing([new ProviderError('server', '500')]);
    await callWithRetry(call, { policy, signal: deadline.signal, clock, onRetry: () => {}, random: () => 1 });
    deadline.dispose();
    expect(clock.slept).toEqual([1_000]);
  });
});

describe('deadlineOf', () => {
  it('is the earliest absolute deadline over the chain, Infinity without one', () => {
    const root = new AbortController().signal;
    expect(deadlineOf(root)).toBe(Number.POSITIVE_INFINITY);
    const at = (now: number): Clock => ({ now: () => now, sleep: () => new Promise<void>(() => {}) });
    const outer = withDeadline(root, 5_000, nodeTimeout, at(1_000));
    const inner = withDeadline(outer.signal, 10_000, nodeTimeout, at(2_000));
    const open = withDeadline(inner.signal, undefined, nodeTimeout, at(3_000));
    expect(deadlineOf(outer.signal)).toBe(6_000);
    expect(deadlineOf(inner.signal)).toBe(6_000);
    expect(deadlineOf(open.signal)).toBe(6_000);
    for (const d of [open, inner, outer]) d.dispose();
  });
});
