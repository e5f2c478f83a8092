import { createFairQueue } from '../domain/fair-queue.js';
import type { WorkQueue } from '../domain/ports.js';

export interface InProcessWorkQueueOptions {
  /** Most handlers running at once. */
  concurrency: number;
  /** Most handlers running at once for one tenant (MAX_RUNNING_WORKFLOWS_PER_TENANT); default `concurrency`. */
  perTenant?: number;
  /** Told about a handler that threw or rejected; the queue itself carries on. */
  onError?: (error: unknown, workflowId: string) => void;
}

/**
 * Queue of workflow ids served by at most `concurrency` handlers at a time, at most `perTenant` of
 * them for one tenant. Tenants take turns (FIFO within each): one tenant's backlog never queues
 * another's work behind it (DESIGN §13).
 *
 * - Work enqueued before `start` (the resume scan at boot) waits until `start`.
 * - An id already waiting is not added again, and one workflow never runs twice at once; an id
 *   enqueued while its handler runs is run once more after it, so a wake-up (an approval arriving
 *   while the run that announced the wait is still finishing) is never lost.
 * - A failing handler is reported through `onError` and never becomes an unhandled rejection.
 * - `stop` stops handing out work (waiting ids stay queued) and resolves once running handlers settle.
 */
export function createInProcessWorkQueue(options: InProcessWorkQueueOptions): WorkQueue {
  const { concurrency, onError } = options;
  const perTenant = options.perTenant ?? concurrency;
  for (const [name, value] of Object.entries({ concurrency, perTenant })) {
    if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer, got ${value}`);
  }

  const waiting = createFairQueue<string>();
  /** Ids waiting or running: the dedupe set. */
  const admitted = new Set<string>();
  const runningIds = new Set<string>();
  /** Running ids enqueued again meanwhile: each runs once more when its handler settles. */
  const again = new Set<string>();
  const runningByTenant = new Map<string, number>();
  let running = 0;
  let handler: ((workflowId: string) => Promise<void>) | undefined;
  let delivering = false;
  let idleWaiters: Array<() => void> = [];

  const tenantOf = new Map<string, string>();
  const hasRoom = (tenantId: string): boolean => (runningByTenant.get(tenantId) ?? 0) < perTenant;

  function pump(): void {
    while (delivering && handler && running < concurrency) {
      const workflowId = waiting.take(hasRoom);
      if (workflowId === undefined) return;
      void runOne(handler, workflowId);
    }
  }

  async function runOne(run: (workflowId: string) => Promise<void>, workflowId: string): Promise<void> {
    const tenantId = tenantOf.get(workflowId) ?? '';
    running += 1;
    runningIds.add(workflowId);
    runningByTenant.set(tenantId, (runningByTenant.get(tenantId) ?? 0) + 1);
    try {
      await run(workflowId);
    } catch (error) {
      report(error, workflowId);
    } finally {
      running -= 1;
      runningIds.delete(workflowId);
      const left = (runningByTenant.get(tenantId) ?? 1) - 1;
      if (left === 0) runningByTenant.delete(tenantId);
      else runningByTenant.set(tenantId, left);
      if (again.delete(workflowId)) waiting.push(tenantId, workflowId);
      else {
        admitted.delete(workflowId);
        tenantOf.delete(workflowId);
      }
      if (running === 0) notifyIdle();
      pump();
    }
  }

  function report(error: unknown, workflowId: string): void {
    try {
      onError?.(error, workflowId);
    } catch {
      // The error reporter failing must not take the queue (or the process) down.
    }
  }

  function notifyIdle(): void {
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  return {
    enqueue(workflowId: string, tenantId: string): void {
      if (admitted.has(workflowId)) {
        if (runningIds.has(workflowId)) again.add(workflowId);
        return;
      }
      admitted.add(workflowId);
      tenantOf.set(workflowId, tenantId);
      waiting.push(tenantId, workflowId);
      pump();
    },

    start(nextHandler: (workflowId: string) => Promise<void>): void {
      if (delivering) throw new Error('work queue already started');
      handler = nextHandler;
      delivering = true;
      pump();
    },

    stop(): Promise<void> {
      delivering = false;
      if (running === 0) return Promise.resolve();
      return new Promise<void>((resolve) => idleWaiters.push(resolve));
    },

    get depth(): number {
      return waiting.size;
    },
  };
}
