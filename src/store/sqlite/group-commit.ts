import type { Db } from './db.js';

/**
 * Group commit (docs/design.md#storage): every write queued during one event-loop turn is committed in one
 * `BEGIN IMMEDIATE` transaction, and each caller's promise settles only after that commit, so
 * batching costs no durability.
 */
export interface GroupCommitter {
  /**
   * Queues a synchronous write. It may run twice (once in the batch, once alone if the batch
   * fails), so it must only touch the database.
   */
  run<T>(write: () => T): Promise<T>;
  /** Commits whatever is queued now, synchronously, held or not (shutdown, tests). */
  flushNow(): void;
  /**
   * Stops committing until the returned release is called: writes queue meanwhile and commit as
   * one batch after it. The checkpointer holds commits for the moment it needs to catch up with the
   * WAL's last frame (checkpointer.ts); releasing twice is harmless.
   */
  hold(): () => void;
  /** Writes queued and not yet committed. */
  readonly pending: number;
}

interface QueuedWrite {
  write: () => unknown;
  resolve: (value: unknown) => void;
  reject: (reason: unknown) => void;
  result: unknown;
}

export function createGroupCommitter(db: Db): GroupCommitter {
  let queue: QueuedWrite[] = [];
  let scheduled: NodeJS.Immediate | undefined;
  let holds = 0;

  // Built once: better-sqlite3 wraps the function in BEGIN IMMEDIATE … COMMIT (or ROLLBACK on throw).
  const commitBatch = db.transaction((batch: QueuedWrite[]) => {
    for (const item of batch) item.result = item.write();
  });
  const commitAlone = db.transaction((item: QueuedWrite) => {
    item.result = item.write();
  });

  function flush(): void {
    if (holds > 0) {
      scheduled = undefined;
      return;
    }
    commitQueued();
  }

  function commitQueued(): void {
    if (scheduled !== undefined) {
      clearImmediate(scheduled);
      scheduled = undefined;
    }
    if (queue.length === 0) return;
    // Swap first: writes queued while this batch commits go to the next turn.
    const batch = queue;
    queue = [];

    try {
      commitBatch.immediate(batch);
    } catch (err) {
      if (batch.length === 1) {
        batch[0]?.reject(err);
        return;
      }
      // The batch rolled back as a whole. Replay each write in its own transaction so that one
      // bad write fails only its own caller.
      for (const item of batch) {
        try {
          commitAlone.immediate(item);
        } catch (err) {
          item.reject(err);
          continue;
        }
        item.resolve(item.result);
      }
      return;
    }
    for (const item of batch) item.resolve(item.result);
  }

  return {
    run<T>(write: () => T): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        queue.push({ write, resolve: resolve as (value: unknown) => void, reject, result: undefined });
        scheduled ??= setImmediate(flush);
      });
    },
    flushNow: commitQueued,
    hold() {
      holds++;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        holds--;
        if (holds === 0 && queue.length > 0) scheduled ??= setImmediate(flush);
      };
    },
    get pending() {
      return queue.length;
    },
  };
}
