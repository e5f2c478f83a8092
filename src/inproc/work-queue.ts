import type { WorkQueue } from '../domain/ports.js';

export interface InProcessWorkQueueOptions {
  /** Most handlers running at once. */
  concurrency: number;
  /** Told about a handler that threw or rejected; the queue itself carries on. */
  onError?: (error: unknown, workflowId: string) => void;
}

/**
 * FIFO queue of workflow ids served by at most `concurrency` handlers at a time.
 *
 * - Work enqueued before `start` (the resume scan at boot) waits until `start`.
 * - An id already waiting or running is not added again: one workflow never runs twice at once.
 * - A failing handler is reported through `onError` and never becomes an unhandled rejection.
 * - `stop` stops handing out work (waiting ids stay queued) and resolves once running handlers settle.
 */
export function createInProcessWorkQueue(options: InProcessWorkQueueOptions): WorkQueue {
  const { concurrency, onError } = options;
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new RangeError(`concurrency must be a positive integer, got ${concurrency}`);
  }

  // Array plus head index: O(1) dequeue without Array#shift's copying on long queues.
  let waiting: string[] = [];
  let head = 0;
  /** Ids waiting or running: the dedupe set. */
  const admitted = new Set<string>();
  let running = 0;
  let handler: ((workflowId: string) => Promise<void>) | undefined;
  let delivering = false;
  let idleWaiters: Array<() => void> = [];

  function takeNext(): string | undefined {
    if (head >= waiting.length) return undefined;
    const next = waiting[head];
    head += 1;
    if (head > 1024 && head * 2 > waiting.length) {
      waiting = waiting.slice(head);
      head = 0;
    }
    return next;
  }

  function pump(): void {
    while (delivering && handler && running < concurrency) {
      const workflowId = takeNext();
      if (workflowId === undefined) return;
      void runOne(handler, workflowId);
    }
  }

  async function runOne(run: (workflowId: string) => Promise<void>, workflowId: string): Promise<void> {
    running += 1;
    try {
      await run(workflowId);
    } catch (error) {
      report(error, workflowId);
    } finally {
      running -= 1;
      admitted.delete(workflowId);
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
    enqueue(workflowId: string): void {
      if (admitted.has(workflowId)) return;
      admitted.add(workflowId);
      waiting.push(workflowId);
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
      return waiting.length - head;
    },
  };
}
