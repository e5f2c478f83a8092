import type { Clock } from '../../src/domain/ports.js';
import { systemClock } from '../../src/inproc/clock.js';

/**
 * A Clock that only moves when the test moves it (docs/design.md#house-style: time is injected). `now()` is a
 * settable number; `sleep(ms, signal)` resolves once the test has advanced time to its due time, or
 * rejects with `signal.reason` (and leaves the queue) when its signal aborts first. `advance` wakes
 * due sleepers one at a time, in due order (ties in the order they went to sleep), and lets the
 * event loop settle after each, so code woken by one sleep can schedule the next inside the same
 * advance.
 *
 * Engine code in this process is driven only by promises, `setImmediate` (the store's group commit,
 * the journal's commitSoon) and this clock, so "settled" (no immediate pending, microtasks drained)
 * means the engine is blocked on the clock or on something the test holds (a scripted model reply).
 */
export interface ManualClock extends Clock {
  /** Moves time forward by `ms`, waking every sleeper due by then (see `advanceTo`). */
  advance(ms: number): Promise<void>;
  /** Moves time forward to `at`, waking each sleeper due by then at its own due time. */
  advanceTo(at: number): Promise<void>;
  /** Moves time to the next sleeper's due time and wakes it (and any other due then); false when none sleeps. */
  advanceToNext(): Promise<boolean>;
  /**
   * Sets `now()` without waking anyone (it may go backwards: clock skew). A sleeper that is due by
   * the new time wakes at the next advance (`advance(0)` will do).
   */
  set(at: number): void;
  /** Sleepers not woken yet, in due order. */
  readonly pending: readonly SleepRecord[];
  /** Due time of the first pending sleeper, or undefined when nobody sleeps. */
  nextDueAt(): number | undefined;
  /** Every sleep asked for since the clock was made, in the order asked (woken, aborted or pending). */
  readonly history: readonly SleepRecord[];
}

export interface SleepRecord {
  /** `now()` when the sleep was asked for. */
  readonly since: number;
  readonly ms: number;
  readonly dueAt: number;
  /** `resolved` once woken by an advance, `aborted` when its signal fired first. */
  state: 'pending' | 'resolved' | 'aborted';
  /** `now()` when it was woken or aborted. */
  endedAt?: number;
}

interface Sleeper {
  record: SleepRecord;
  order: number;
  wake(): void;
}

/** Fixed epoch so records and events carry the same times on every run: 2026-01-01T00:00:00Z. */
export const MANUAL_CLOCK_START = Date.UTC(2026, 0, 1);

export function createManualClock(start: number = MANUAL_CLOCK_START): ManualClock {
  let now = start;
  let order = 0;
  const sleepers: Sleeper[] = [];
  const history: SleepRecord[] = [];

  const byDue = (a: Sleeper, b: Sleeper) => a.record.dueAt - b.record.dueAt || a.order - b.order;

  function remove(sleeper: Sleeper): void {
    const index = sleepers.indexOf(sleeper);
    if (index !== -1) sleepers.splice(index, 1);
  }

  function nextDueAt(): number | undefined {
    let due: number | undefined;
    for (const sleeper of sleepers) if (due === undefined || sleeper.record.dueAt < due) due = sleeper.record.dueAt;
    return due;
  }

  async function advanceTo(at: number): Promise<void> {
    if (!Number.isFinite(at)) throw new RangeError(`cannot advance a manual clock to ${at}`);
    if (at < now) throw new RangeError(`cannot advance a manual clock backwards (now ${now}, asked ${at})`);
    // Whatever was scheduled before this call gets its chance to go to sleep first.
    await settleEventLoop();
    for (;;) {
      sleepers.sort(byDue);
      const next = sleepers[0];
      if (next === undefined || next.record.dueAt > at) break;
      sleepers.shift();
      now = Math.max(now, next.record.dueAt);
      next.wake();
      await settleEventLoop();
    }
    now = at;
    await settleEventLoop();
  }

  return {
    now: () => now,

    sleep(ms, signal) {
      if (signal?.aborted) return Promise.reject(signal.reason);
      const record: SleepRecord = { since: now, ms, dueAt: now + Math.max(0, ms), state: 'pending' };
      history.push(record);
      // Nothing to wait for: due now, like a zero timer.
      if (ms <= 0) {
        record.state = 'resolved';
        record.endedAt = now;
        return Promise.resolve();
      }
      return new Promise<void>((resolve, reject) => {
        const onAbort = () => {
          remove(sleeper);
          record.state = 'aborted';
          record.endedAt = now;
          reject(signal?.reason);
        };
        const sleeper: Sleeper = {
          record,
          order: order++,
          wake: () => {
            signal?.removeEventListener('abort', onAbort);
            record.state = 'resolved';
            record.endedAt = now;
            resolve();
          },
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        sleepers.push(sleeper);
      });
    },

    advance(ms) {
      if (!(ms >= 0)) return Promise.reject(new RangeError(`cannot advance a manual clock by ${ms} ms`));
      return advanceTo(now + ms);
    },

    advanceTo,

    async advanceToNext() {
      await settleEventLoop();
      const due = nextDueAt();
      if (due === undefined) return false;
      await advanceTo(Math.max(now, due));
      return true;
    },

    set(at) {
      now = at;
    },

    get pending() {
      return [...sleepers].sort(byDue).map((s) => s.record);
    },

    nextDueAt,

    get history() {
      return history;
    },
  };
}

/**
 * Advances the clock from sleeper to sleeper, letting the event loop settle before each step, until
 * `done()` holds. Throws when `done()` does not hold and nobody sleeps (what it waits for is not on
 * the clock), or when the next sleeper lies past `maxAdvanceMs`.
 */
export async function advanceUntil(
  clock: ManualClock,
  done: () => boolean,
  /** `unmet`: what a failure says (called when it fails), e.g. what still runs. */
  options: { maxAdvanceMs?: number; unmet?: () => string } = {},
): Promise<void> {
  const { maxAdvanceMs = 24 * 60 * 60 * 1000, unmet = () => 'the condition does not hold' } = options;
  const limit = clock.now() + maxAdvanceMs;
  for (;;) {
    await settleEventLoop();
    if (done()) return;
    const due = clock.nextDueAt();
    if (due === undefined) throw new Error(`${unmet()} (and nothing sleeps on the clock)`);
    if (due > limit) throw new Error(`${unmet()} (and the next sleeper is past maxAdvanceMs, ${maxAdvanceMs})`);
    await clock.advanceTo(Math.max(clock.now(), due));
  }
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Consecutive quiet turns required: work queued by a microtask after our check shows up on the next. */
const QUIET_TURNS = 3;
const MAX_TURNS = 100_000;

/**
 * Resolves once the event loop has nothing left to do for the code under test: no `setImmediate`
 * pending and the microtask queue drained, for a few turns in a row. Between turns every pending
 * immediate (a group commit, a commitSoon) and every promise callback runs. Timers are not waited
 * for: engine code uses the injected clock, never `setTimeout`.
 */
export async function settleEventLoop(): Promise<void> {
  let quiet = 0;
  for (let turns = 0; turns < MAX_TURNS; turns++) {
    await turn();
    if (process.getActiveResourcesInfo().includes('Immediate')) quiet = 0;
    else if (++quiet >= QUIET_TURNS) return;
  }
  throw new Error(`the event loop did not settle within ${MAX_TURNS} setImmediate turns (a busy loop?)`);
}

/**
 * The real clock, counting its sleeps: a test can prove a hot path sets no timer, or see when a sim
 * call "reaches" its backend (its latency sleep starts).
 */
export function countingClock(): Clock & { sleeps: number[] } {
  const sleeps: number[] = [];
  return {
    sleeps,
    now: () => Date.now(),
    sleep: (ms, signal) => {
      sleeps.push(ms);
      return systemClock.sleep(ms, signal);
    },
  };
}
