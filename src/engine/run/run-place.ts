import type { RunningPlace } from '../../domain/ports.js';
import type { PlaceKeeper } from '../node-context.js';

/**
 * How one run holds its running place (docs/workflows.md#running-caps): the place is held while at least one
 * strand of the run has work of its own, and given back while every strand only waits on child
 * workflows — which is what lets a tree deeper than MAX_RUNNING_WORKFLOWS_PER_TENANT finish instead
 * of its parents holding every place their children need. A strand is the run's main line or one
 * branch of a parallel node. The first strand with work again retakes a place (ahead of roots
 * waiting to start); the others with work meanwhile wait for that same retake. A run whose signal
 * aborts goes on without a place: it only records its end (cancelled, timed out, shutting down).
 * Without a place (a cancelled workflow settled before it was picked up) there is nothing to keep.
 */
export class RunPlace implements PlaceKeeper {
  /** Strands with work of their own (not waiting on children). */
  private working = 1;
  private retaking: Promise<void> | undefined;
  private signal: AbortSignal;

  constructor(
    private readonly place: RunningPlace | undefined,
    signal: AbortSignal,
  ) {
    this.signal = signal;
  }

  /** Retakes stop waiting when this aborts (the run's deadline, which follows its cancellation). */
  until(signal: AbortSignal): void {
    this.signal = signal;
  }

  async waitOnChildren<T>(wait: () => Promise<T>): Promise<T> {
    this.idle();
    try {
      return await wait();
    } finally {
      await this.busy();
    }
  }

  async branches<T>(tasks: ReadonlyArray<() => Promise<T>>): Promise<PromiseSettledResult<T>[]> {
    if (tasks.length === 0) return [];
    // One strand becomes n; the last branch to end is the strand that goes on.
    this.working += tasks.length - 1;
    let left = tasks.length;
    return Promise.allSettled(
      tasks.map(async (task) => {
        try {
          return await task();
        } finally {
          left -= 1;
          if (left > 0) this.idle();
        }
      }),
    );
  }

  private idle(): void {
    this.working -= 1;
    if (this.working === 0) this.place?.release();
  }

  private async busy(): Promise<void> {
    this.working += 1;
    const { place } = this;
    if (!place || place.held) return;
    this.retaking ??= place
      .retake(this.signal)
      .catch(() => {
        // Aborted: the run is ending and only records its end, which needs no place.
      })
      .finally(() => {
        this.retaking = undefined;
      });
    await this.retaking;
  }
}
