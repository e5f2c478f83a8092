import type { AppError } from '../../domain/errors.js';
import type { ChildLauncher } from '../../domain/ports.js';
import type { WorkflowRecord } from '../../domain/records.js';
import { isShutdown } from '../errors.js';
import type { PlaceKeeper } from '../node-context.js';
import { followedController } from './deadline.js';

/**
 * The child workflows a run's agents spawned (`request_spawn_workflow`, docs/design.md#agent-tools). They run
 * concurrently with the rest of the run, under its signal, and the run does not end before them:
 * a parent never reports `completed` while work it started is still going, and cancelling,
 * timing out or shutting down the parent reaches every spawned child (and theirs).
 */
export class SpawnedChildren {
  private readonly controller = followedController();
  private readonly running = new Set<Promise<unknown>>();
  private detach: (() => void) | undefined;

  constructor(
    private readonly children: ChildLauncher,
    runSignal: AbortSignal,
    private readonly onError: (err: unknown, context: Record<string, unknown>) => void,
  ) {
    this.follow(runSignal);
  }

  /** Children also stop with this signal (the workflow deadline, for one execution). */
  follow(signal: AbortSignal): void {
    if (signal.aborted) {
      this.controller.abort(signal.reason);
      return;
    }
    const onAbort = () => this.controller.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    const previous = this.detach;
    this.detach = () => {
      previous?.();
      signal.removeEventListener('abort', onAbort);
    };
  }

  launch(child: WorkflowRecord, parentSpan: string): void {
    const run = this.children
      .run(child, this.controller.signal, parentSpan)
      .catch((err: unknown) => {
        // A spawned child's failure is its own (its row says why); only a fault of ours is reported.
        if (!isShutdown(err)) this.onError(err, { workflowId: child.id });
      })
      .finally(() => this.running.delete(run));
    this.running.add(run);
  }

  /** Stops every spawned child (the parent failed or was cancelled). */
  stop(reason: AppError): void {
    this.controller.abort(reason);
  }

  /** Waits for every spawned child still running, the run's place given back meanwhile (run-place.ts). */
  async settledWithin(place: PlaceKeeper): Promise<void> {
    if (this.running.size > 0) await place.waitOnChildren(() => this.settled());
    else await this.settled();
  }

  /** Resolves once every spawned child, including those spawned meanwhile, has ended. */
  async settled(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
    this.detach?.();
    this.detach = undefined;
  }
}
