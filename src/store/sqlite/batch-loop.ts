import type { GroupCommitter } from './group-commit.js';

/**
 * Background work done one short commit at a time (the corpus purge, the compressing of chunk rows
 * written before migrations/sqlite/0023): `step` runs in the group committer and returns true while work
 * remains; the next step waits for a setImmediate, so other writes and requests interleave.
 */
export interface BatchLoop {
  /** Starts the loop unless it runs or was stopped. */
  kick(): void;
  /** No further step starts; what is left resumes at the next start. */
  stop(): void;
}

export function createBatchLoop(
  committer: GroupCommitter,
  step: () => boolean,
  /** A commit failed: the loop stops until kicked again (the next delete, the next start). */
  onError: (err: unknown) => void,
): BatchLoop {
  let running = false;
  let stopped = false;
  const next = (): void => {
    // Stopped while this step waited for its setImmediate: the database may be closing.
    if (stopped) {
      running = false;
      return;
    }
    committer.run(step).then(
      (more) => {
        if (more && !stopped) setImmediate(next);
        else running = false;
      },
      (err: unknown) => {
        running = false;
        onError(err);
      },
    );
  };
  return {
    kick() {
      if (running || stopped) return;
      running = true;
      next();
    },
    stop() {
      stopped = true;
    },
  };
}
