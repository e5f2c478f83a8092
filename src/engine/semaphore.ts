/**
 * Counting semaphore for the global LLM concurrency limit (DESIGN §4). `acquire` resolves at once
 * when a permit is free; waiters are served FIFO and leave the line when their signal aborts.
 */
export interface Semaphore {
  acquire(signal: AbortSignal): Promise<void>;
  release(): void;
  readonly active: number;
  readonly waiting: number;
}

export function createSemaphore(limit: number): Semaphore {
  let active = 0;
  const waiters: Array<{ grant: () => void }> = [];
  const resolved = Promise.resolve();

  return {
    get active() {
      return active;
    },
    get waiting() {
      return waiters.length;
    },
    acquire(signal) {
      if (signal.aborted) return Promise.reject(signal.reason);
      if (active < limit) {
        active++;
        return resolved;
      }
      return new Promise<void>((resolve, reject) => {
        const waiter = {
          grant: () => {
            signal.removeEventListener('abort', onAbort);
            active++;
            resolve();
          },
        };
        const onAbort = () => {
          const index = waiters.indexOf(waiter);
          if (index >= 0) waiters.splice(index, 1);
          reject(signal.reason);
        };
        signal.addEventListener('abort', onAbort, { once: true });
        waiters.push(waiter);
      });
    },
    release() {
      active--;
      waiters.shift()?.grant();
    },
  };
}
