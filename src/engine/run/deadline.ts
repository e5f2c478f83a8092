import { setMaxListeners } from 'node:events';
import type { AppError } from '../../domain/errors.js';
import type { Clock } from '../../domain/ports.js';

/**
 * Deadlines (docs/design.md#agent-tools): a child abort signal that fires when its parent aborts (same reason) or
 * when its time is up (with `onTimeout()` as reason), disposed as soon as the guarded work is over.
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

/**
 * How many abort listeners one of the engine's signals may hold at once before Node warns. A run's
 * signal and a node's deadline are followed by every branch, call and child running under them at
 * that moment — each listener removed when its work ends — so a parallel of 12 prompts or 12
 * children is 12 listeners, not a leak, and Node's default of 10 logged MaxListenersExceededWarning.
 * The bound stays finite so that a real leak is still reported: above what one definition can hold
 * (200 nodes, 100 children each) plus their in-flight calls.
 */
const MAX_FOLLOWERS = 1_000;

/** A controller whose signal many concurrent branches, calls and children may follow. */
export function followedController(): AbortController {
  const controller = new AbortController();
  setMaxListeners(MAX_FOLLOWERS, controller.signal);
  return controller;
}

/** The earliest deadline over the signal's chain (clock time), or Infinity when none is known. */
export function deadlineOf(signal: AbortSignal): number {
  return deadlines.get(signal) ?? Number.POSITIVE_INFINITY;
}

interface Pending {
  at: number;
  fire: () => void;
}

/** The reason a superseded wake-up is cancelled with: preallocated, abort() builds no DOMException. */
const REARMED = Object.freeze({ rearmed: true });
const noop = (): void => {};

/**
 * One timer for every deadline of a run — its own and its nodes' — on the injected clock (so a
 * test's manual clock drives them like every other wait). A node's deadline is a set entry, not a
 * timer: the one wake-up is armed for the earliest entry and moved only when an earlier one comes.
 * Deadlines of a sequence's nodes come later and later, so a run of fast steps arms it once; a
 * wake-up that finds nothing due (the node finished) re-arms for what is left.
 */
export class RunDeadlines {
  private readonly pending = new Set<Pending>();
  private armedAt = Number.POSITIVE_INFINITY;
  private wake: AbortController | undefined;

  constructor(private readonly clock: Clock) {}

  within(parent: AbortSignal, ms: number | undefined, onTimeout: () => AppError): Deadline {
    const controller = followedController();
    if (parent.aborted) {
      controller.abort(parent.reason);
      return { signal: controller.signal, dispose: noop };
    }
    const own = ms === undefined ? Number.POSITIVE_INFINITY : this.clock.now() + ms;
    const at = Math.min(deadlineOf(parent), own);
    if (at !== Number.POSITIVE_INFINITY) deadlines.set(controller.signal, at);
    const onParentAbort = () => controller.abort(parent.reason);
    parent.addEventListener('abort', onParentAbort, { once: true });
    const entry: Pending | undefined =
      ms === undefined ? undefined : { at: own, fire: () => controller.abort(onTimeout()) };
    if (entry) this.add(entry);
    return {
      signal: controller.signal,
      dispose: () => {
        if (entry) this.pending.delete(entry);
        parent.removeEventListener('abort', onParentAbort);
      },
    };
  }

  /** The run is over: no wake-up stays armed behind it. */
  close(): void {
    this.pending.clear();
    this.disarm();
  }

  private add(entry: Pending): void {
    this.pending.add(entry);
    if (entry.at < this.armedAt) this.arm(entry.at);
  }

  private arm(at: number): void {
    this.disarm();
    const wake = new AbortController();
    this.wake = wake;
    this.armedAt = at;
    this.clock.sleep(Math.max(0, at - this.clock.now()), wake.signal).then(() => this.due(wake), noop);
  }

  private disarm(): void {
    this.wake?.abort(REARMED);
    this.wake = undefined;
    this.armedAt = Number.POSITIVE_INFINITY;
  }

  private due(wake: AbortController): void {
    if (this.wake !== wake) return;
    this.wake = undefined;
    this.armedAt = Number.POSITIVE_INFINITY;
    const now = this.clock.now();
    let next = Number.POSITIVE_INFINITY;
    for (const entry of [...this.pending]) {
      if (entry.at <= now) {
        this.pending.delete(entry);
        entry.fire();
      } else if (entry.at < next) next = entry.at;
    }
    if (next !== Number.POSITIVE_INFINITY) this.arm(next);
  }
}
