import { createFairQueue } from '../../domain/fair-queue.js';

/**
 * Counting semaphore for the global model-call limit (CONCURRENCY, docs/design.md#execution). `acquire` resolves
 * at once when a permit is free; otherwise the caller waits in its group's line (its tenant), FIFO
 * within each. A released permit goes to the waiting group that holds the fewest permits, groups
 * holding as few taking turns — so one tenant's hundred queued calls never make another tenant's
 * single call wait behind them (docs/design.md#security), and a tenant whose calls are short keeps its share:
 * by plain turns, every permit it frees would go to the tenant of the long calls in its turn and
 * stay there for a long call. A waiter whose signal aborts leaves its line.
 */
export interface Semaphore {
  acquire(signal: AbortSignal, group?: string): Promise<void>;
  /** Gives back a permit of `group` (the group it was acquired for). */
  release(group?: string): void;
  readonly active: number;
  readonly waiting: number;
}

interface Waiter {
  group: string;
  grant: () => void;
}

export function createSemaphore(limit: number): Semaphore {
  let active = 0;
  const waiters = createFairQueue<Waiter>();
  /** Permits held, and waiters, per group (absent: none). */
  const held = new Map<string, number>();
  const waitingIn = new Map<string, number>();
  const count = (map: Map<string, number>, group: string, by: number): void => {
    const n = (map.get(group) ?? 0) + by;
    if (n === 0) map.delete(group);
    else map.set(group, n);
  };
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
        count(held, group, 1);
        waiters.served(group);
        return resolved;
      }
      return new Promise<void>((resolve, reject) => {
        const waiter: Waiter = {
          group,
          grant: () => {
            signal.removeEventListener('abort', onAbort);
            active++;
            count(held, group, 1);
            resolve();
          },
        };
        const onAbort = () => {
          if (waiters.remove(group, waiter)) count(waitingIn, group, -1);
          reject(signal.reason);
        };
        signal.addEventListener('abort', onAbort, { once: true });
        waiters.push(group, waiter);
        count(waitingIn, group, 1);
      });
    },
    release(group = '') {
      active--;
      count(held, group, -1);
      if (waitingIn.size === 0) return;
      let fewest = Number.POSITIVE_INFINITY;
      for (const waitingGroup of waitingIn.keys()) fewest = Math.min(fewest, held.get(waitingGroup) ?? 0);
      const next = waiters.take((candidate) => (held.get(candidate) ?? 0) === fewest);
      if (!next) return;
      count(waitingIn, next.group, -1);
      next.grant();
    },
  };
}
