import type { Clock } from '../domain/ports.js';

/**
 * Retention's rules and pacing, shared by both stores (src/store/sqlite/retention.repo.ts,
 * src/store/postgres/retention.ts): which tables a workflow tree owns, how big a batch is, and the
 * timer that runs batches until nothing is due. The stores run the deletes.
 */

/** Trees deleted per commit; a full batch schedules the next one right after (BUSY_PAUSE_MS). */
export const BATCH_TREES = 64;
/** No more trees join a batch once it holds this many workflows (big trees fill it early). */
export const BATCH_WORKFLOWS = 512;
const BUSY_PAUSE_MS = 20;
const IDLE_INTERVAL_MS = 10_000;

/**
 * Every table holding rows of one workflow, by its workflow column, in a delete order the foreign
 * keys accept (rows referencing nodes and workflows first). test/api/retention.test.ts counts
 * an old tree's rows in every table with a `workflow_id` column: a new such table must be listed here.
 */
export const WORKFLOW_OWNED_TABLES: ReadonlyArray<readonly [table: string, column: string]> = [
  ['idempotency_keys', 'workflow_id'],
  ['efficiency', 'workflow_id'],
  ['rewards', 'workflow_id'],
  ['feedback', 'workflow_id'],
  ['agent_uses', 'workflow_id'],
  ['reflections', 'workflow_id'],
  ['reflection_requests', 'workflow_id'],
  ['journal', 'workflow_id'],
  ['tool_calls', 'workflow_id'],
  ['retrieval_runs', 'workflow_id'],
  ['nodes', 'workflow_id'],
  ['workflows', 'id'],
];

export interface SweepResult {
  /** Root workflows whose trees were deleted. */
  trees: number;
  /** Workflows deleted (roots and their children). */
  workflows: number;
  /** Rows deleted over every owned table. */
  rows: number;
  /** Free pages handed back to the file system. */
  reclaimedPages: number;
}

export interface RetentionSweeper {
  /** Sweeps until nothing is due (batch after batch, each its own commit); what it deleted in all. */
  sweepNow(): Promise<SweepResult>;
  /** Stops the timer; a batch in flight commits with the store's last flush. */
  stop(): void;
}

export interface RetentionOptions {
  clock: Clock;
  /** Finished trees older than this go; 0 keeps everything (no timer is started). */
  retentionMs: number;
  /** Whether this sweeper runs on its own timer (default true); scaled out, a cluster cron calls `sweepNow`. */
  timer?: boolean;
  onError: (err: unknown) => void;
}

/** One batch's deletes, committed: what it deleted, and whether another batch is due at once. */
export type RetentionBatch = (cutoff: number) => Promise<SweepResult & { more: boolean }>;

/** Runs `batch` on a timer (unref'd) until nothing is due, and on demand (`sweepNow`). */
export function paceRetention(options: RetentionOptions, batch: RetentionBatch): RetentionSweeper {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let running: Promise<SweepResult> | undefined;

  const sweepNow = (): Promise<SweepResult> => {
    if (options.retentionMs <= 0) return Promise.resolve({ trees: 0, workflows: 0, rows: 0, reclaimedPages: 0 });
    running ??= (async () => {
      const total: SweepResult = { trees: 0, workflows: 0, rows: 0, reclaimedPages: 0 };
      try {
        for (;;) {
          const cutoff = options.clock.now() - options.retentionMs;
          const done = await batch(cutoff);
          total.trees += done.trees;
          total.workflows += done.workflows;
          total.rows += done.rows;
          total.reclaimedPages += done.reclaimedPages;
          if (!done.more || stopped) return total;
          // Let requests and the executor in between two batches.
          await new Promise((resolve) => setTimeout(resolve, BUSY_PAUSE_MS));
          if (stopped) return total;
        }
      } finally {
        running = undefined;
      }
    })();
    return running;
  };

  const schedule = (): void => {
    if (stopped) return;
    timer = setTimeout(() => {
      sweepNow().then(schedule, (err: unknown) => {
        options.onError(err);
        schedule();
      });
    }, IDLE_INTERVAL_MS);
    timer.unref();
  };
  if (options.retentionMs > 0 && (options.timer ?? true)) schedule();

  return {
    sweepNow,
    stop() {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
    },
  };
}
