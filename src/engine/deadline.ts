import type { AppError } from '../domain/errors.js';

/**
 * A child abort signal that fires when its parent aborts (same reason) or after `ms` (with
 * `onTimeout()` as reason). Cheaper than AbortSignal.any + AbortSignal.timeout and, unlike them,
 * lets the caller dispose the timer and listener as soon as the guarded work is over.
 */
export interface Deadline {
  signal: AbortSignal;
  dispose(): void;
}

export function withDeadline(parent: AbortSignal, ms: number | undefined, onTimeout: () => AppError): Deadline {
  const controller = new AbortController();
  if (parent.aborted) {
    controller.abort(parent.reason);
    return { signal: controller.signal, dispose() {} };
  }
  const onParentAbort = () => controller.abort(parent.reason);
  parent.addEventListener('abort', onParentAbort, { once: true });
  const timer = ms === undefined ? undefined : setTimeout(() => controller.abort(onTimeout()), ms);
  timer?.unref?.();
  return {
    signal: controller.signal,
    dispose() {
      if (timer) clearTimeout(timer);
      parent.removeEventListener('abort', onParentAbort);
    },
  };
}
