import { createFairQueue } from '../domain/fair-queue.js';

/**
 * Counting semaphore for the global model-call limit (CONCURRENCY, DESIGN §4). `acquire` resolves
 * at once when a permit is free; otherwise the caller waits in its group's line (its tenant), and a
 * released permit goes to the groups in turn, FIFO within each — so one tenant's hundred queued
 * calls never make another tenant's single call wait behind them (DESIGN §13). A waiter whose
 * signal aborts leaves its line.
 */
export interface Semaphore {
  acquire(signal: AbortSignal, group?: string): Promise<void>;
  release(): void;
  readonly active: number;
  readonly waiting: number;
}

interface Waiter {
  grant: () => void;
}

export function createSemaphore(limit: number): Semaphore {
  let active = 0;
  const waiters = createFairQueue<Waiter>();
  const resolved = Promise.resolve();

  return {
    get active() {
      return active;
    },
    get waiting() {
      return waiters.size;
    },
    acquire(signal, group = '') {
      if (signal.aborted) return Promise.reject(signal.reason);
      if (active < limit) {
        active++;
        waiters.served(group);
        return resolved;
      }
      return new Promise<void>((resolve, reject) => {
        const waiter: Waiter = {
          grant: () => {
            signal.removeEventListener('abort', onAbort);
            active++;
            resolve();
          },
        };
        const onAbort = () => {
          waiters.remove(group, waiter);
          reject(signal.reason);
        };
        signal.addEventListener('abort', onAbort, { once: true });
        waiters.push(group, waiter);
      });
    },
    release() {
      active--;
      waiters.take()?.grant();
    },
  };
}
