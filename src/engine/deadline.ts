import type { AppError } from '../domain/errors.js';
import type { Clock } from '../domain/ports.js';

/**
 * A child abort signal that fires when its parent aborts (same reason) or after `ms` (with
 * `onTimeout()` as reason). Cheaper than AbortSignal.any + AbortSignal.timeout and, unlike them,
 * lets the caller dispose the timer and listener as soon as the guarded work is over.
 *
 * Each signal made here also remembers its absolute deadline (clock time: `now + ms`, or earlier
 * when a signal up the chain ends sooner), so code that only holds the signal — the transport-retry
 * loop — can tell whether a wait still fits before the call is cut, without another parameter.
 */
export interface Deadline {
  signal: AbortSignal;
  dispose(): void;
}

const deadlines = new WeakMap<AbortSignal, number>();

/** The earliest deadline over the signal's chain (clock time), or Infinity when none is known. */
export function deadlineOf(signal: AbortSignal): number {
  return deadlines.get(signal) ?? Number.POSITIVE_INFINITY;
}

/**
 * Carries `from`'s deadline over to `signal`, for signals linked by hand rather than made here
 * (a child workflow's own controller follows its parent's signal).
 */
export function inheritDeadline(signal: AbortSignal, from: AbortSignal | undefined): void {
  if (from === undefined) return;
  const at = Math.min(deadlineOf(signal), deadlineOf(from));
  if (at !== Number.POSITIVE_INFINITY) deadlines.set(signal, at);
}

/**
 * The timer runs on the injected clock (its `sleep`, cancelled on dispose), so a test's manual clock
 * drives deadlines like every other wait; `clock.now()` is the time base of `deadlineOf`.
 */
export function withDeadline(
  parent: AbortSignal,
  ms: number | undefined,
  onTimeout: () => AppError,
  clock: Clock,
): Deadline {
  const controller = new AbortController();
  if (parent.aborted) {
    controller.abort(parent.reason);
    return { signal: controller.signal, dispose() {} };
  }
  const at = Math.min(deadlineOf(parent), ms === undefined ? Number.POSITIVE_INFINITY : clock.now() + ms);
  if (at !== Number.POSITIVE_INFINITY) deadlines.set(controller.signal, at);
  const onParentAbort = () => controller.abort(parent.reason);
  parent.addEventListener('abort', onParentAbort, { once: true });
  const timer = ms === undefined ? undefined : new AbortController();
  if (timer) {
    clock.sleep(ms as number, timer.signal).then(
      () => controller.abort(onTimeout()),
      () => {},
    );
  }
  return {
    signal: controller.signal,
    dispose() {
      timer?.abort();
      parent.removeEventListener('abort', onParentAbort);
    },
  };
}
