import { createFairQueue, type FairQueue } from '../domain/fair-queue.js';
import type { RunningPlace, WorkQueue } from '../domain/ports.js';

export interface InProcessWorkQueueOptions {
  /** Most places held at once (MAX_RUNNING_WORKFLOWS). */
  concurrency: number;
  /** Most places one tenant's workflows hold at once (MAX_RUNNING_WORKFLOWS_PER_TENANT); default `concurrency`. */
  perTenant?: number;
  /** Told about a handler that threw or rejected; the queue itself carries on. */
  onError?: (error: unknown, workflowId: string) => void;
}

/** A child workflow or a parent with work again, waiting for a place. */
interface PlaceWaiter {
  tenantId: string;
  grant: () => void;
}

/**
 * Queue of workflow ids, and the running places they run in: at most `concurrency` places held at
 * a time, at most `perTenant` of them by one tenant's workflows — roots and children alike (docs/workflows.md#running-caps). A root takes its place when it leaves the queue; a child asks for one (`place`);
 * a workflow that only waits on its children gives its place back and retakes one when it has work
 * again. A freed place goes first to children and retaking parents (work of trees already running,
 * whose end frees their places), then to roots; within each, a tenant below its share (the global
 * cap over the tenants holding or waiting for places) goes first, and tenants take turns (FIFO
 * within a tenant), so one tenant's backlog never queues another's work behind it. A tenant at
 * its cap is skipped, never waited for. No deadlock: a place is only ever held by a workflow with
 * work of its own, which ends or comes to wait on children (and then gives the place back).
 *
 * - Work enqueued before `start` (the resume scan at boot) waits until `start`.
 * - An id already waiting is not added again, and one workflow never runs twice at once; an id
 *   enqueued while its handler runs is run once more after it, so a wake-up (an approval arriving
 *   while the run that announced the wait is still finishing) is never lost.
 * - A failing handler is reported through `onError` and never becomes an unhandled rejection.
 * - `stop` stops handing out roots (waiting ids stay queued; running trees still get places) and
 *   resolves once running handlers settle.
 */
export function createInProcessWorkQueue(options: InProcessWorkQueueOptions): WorkQueue {
  const { concurrency, onError } = options;
  const perTenant = options.perTenant ?? concurrency;
  for (const [name, value] of Object.entries({ concurrency, perTenant })) {
    if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer, got ${value}`);
  }

  const waiting = createFairQueue<string>();
  const started = createFairQueue<PlaceWaiter>();
  /** Ids waiting or running: the dedupe set. */
  const admitted = new Set<string>();
  const runningIds = new Set<string>();
  /** Running ids enqueued again meanwhile: each runs once more when its handler settles. */
  const again = new Set<string>();
  const heldByTenant = new Map<string, number>();
  let held = 0;
  let handlers = 0;
  let handler: ((workflowId: string, place: RunningPlace, untouched: boolean) => Promise<void>) | undefined;
  let delivering = false;
  let idleWaiters: Array<() => void> = [];

  const tenantOf = new Map<string, string>();
  const hasRoom = (tenantId: string): boolean => (heldByTenant.get(tenantId) ?? 0) < perTenant;

  /** The global cap over the tenants holding or waiting for places (at least 1). */
  function share(): number {
    const tenants = new Set(heldByTenant.keys());
    for (const tenantId of waiting.groups) tenants.add(tenantId);
    for (const tenantId of started.groups) tenants.add(tenantId);
    return Math.max(1, Math.ceil(concurrency / Math.max(1, tenants.size)));
  }

  /** The next waiter of `queue`: a tenant below its share first, else any tenant with room. */
  function next<T>(queue: FairQueue<T>): T | undefined {
    if (queue.size === 0) return undefined;
    const fair = share();
    return queue.take((t) => hasRoom(t) && (heldByTenant.get(t) ?? 0) < fair) ?? queue.take(hasRoom);
  }

  function take(tenantId: string): void {
    held += 1;
    heldByTenant.set(tenantId, (heldByTenant.get(tenantId) ?? 0) + 1);
  }

  function give(tenantId: string): void {
    held -= 1;
    const left = (heldByTenant.get(tenantId) ?? 1) - 1;
    if (left === 0) heldByTenant.delete(tenantId);
    else heldByTenant.set(tenantId, left);
  }

  function pump(): void {
    while (held < concurrency) {
      const waiter = next(started);
      if (waiter) {
        waiter.grant();
        continue;
      }
      if (!delivering || !handler) return;
      const workflowId = next(waiting);
      if (workflowId === undefined) return;
      void runOne(handler, workflowId);
    }
  }

  /** A place of `tenantId`, taken now or as soon as one is free for it (ahead of roots). */
  function acquire(tenantId: string, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(signal.reason);
    if (held < concurrency && hasRoom(tenantId)) {
      take(tenantId);
      started.served(tenantId);
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const waiter: PlaceWaiter = {
        tenantId,
        grant: () => {
          signal.removeEventListener('abort', onAbort);
          take(tenantId);
          resolve();
        },
      };
      const onAbort = () => {
        started.remove(tenantId, waiter);
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      started.push(tenantId, waiter);
    });
  }

  /** A place already taken for `tenantId`. */
  function placeOf(tenantId: string): RunningPlace {
    let holding = true;
    return {
      get held() {
        return holding;
      },
      release() {
        if (!holding) return;
        holding = false;
        give(tenantId);
        pump();
      },
      async retake(signal) {
        if (holding) return;
        await acquire(tenantId, signal);
        holding = true;
      },
    };
  }

  async function runOne(
    run: (workflowId: string, place: RunningPlace, untouched: boolean) => Promise<void>,
    workflowId: string,
  ): Promise<void> {
    const tenantId = tenantOf.get(workflowId) ?? '';
    take(tenantId);
    const place = placeOf(tenantId);
    handlers += 1;
    runningIds.add(workflowId);
    try {
      // One process: nothing else runs or cancels a workflow behind this queue's back.
      await run(workflowId, place, true);
    } catch (error) {
      report(error, workflowId);
    } finally {
      handlers -= 1;
      runningIds.delete(workflowId);
      if (again.delete(workflowId)) waiting.push(tenantId, workflowId);
      else {
        admitted.delete(workflowId);
        tenantOf.delete(workflowId);
      }
      if (handlers === 0) notifyIdle();
      // Releasing pumps; a place given back earlier has been pumped already.
      if (place.held) place.release();
      else pump();
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

    async runHere(_workflowId, work) {
      // One process: this instance is the only one that could run it.
      await work();
      return true;
    },

    resumeAt(workflowId, tenantId, at) {
      // Not used in one process (nothing parks without leases), but kept true to the port.
      setTimeout(() => this.enqueue(workflowId, tenantId), Math.max(0, at - Date.now())).unref();
    },

    announceCancel() {
      // The executor aborted this process's runs itself; there is no other instance to tell.
    },

    async place(tenantId, signal) {
      await acquire(tenantId, signal);
      return placeOf(tenantId);
    },

    placesHeld(tenantId) {
      return tenantId === undefined ? held : (heldByTenant.get(tenantId) ?? 0);
    },

    start(nextHandler): void {
      if (delivering) throw new Error('work queue already started');
      handler = nextHandler;
      delivering = true;
      pump();
    },

    stop(): Promise<void> {
      delivering = false;
      if (handlers === 0) return Promise.resolve();
      return new Promise<void>((resolve) => idleWaiters.push(resolve));
    },

    get depth(): number {
      return waiting.size;
    },
  };
}
