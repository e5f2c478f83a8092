import { Logger, type Runner, run, type TaskList } from 'graphile-worker';
import type pg from 'pg';

/**
 * Short background jobs over PostgreSQL with graphile-worker (its own `graphile_worker` schema,
 * migrated by the library at start): the maintenance every cluster needs once, not once per
 * instance, as crons — graphile-worker schedules each cron tick as a job with a key of its own, so
 * however many instances run, each tick runs once — and delayed resumes of runs that gave their
 * lease back to wait (docs/operations.md#scale-out).
 */
export interface BackgroundJobs {
  /** Wakes the parked root `workflowId` at `at` (epoch ms): `wake` runs then, on some instance. */
  resumeAt(workflowId: string, at: number): Promise<void>;
  stop(): Promise<void>;
}

export interface BackgroundJobOptions {
  pool: pg.Pool;
  /** Runs once per cluster per tick. */
  maintenance: {
    pruneIdempotencyKeys(): Promise<unknown>;
    sweepRetention(): Promise<unknown>;
    purgeCorpora(): Promise<unknown>;
  };
  /** A delayed resume is due: make the root claimable again and tell the instances. */
  wake(workflowId: string): Promise<void>;
  warn: (message: string, err?: unknown) => void;
}

export const RESUME_TASK = 'baton_resume_workflow';

/**
 * Idempotency keys hourly; retention and corpus purges every minute (each sweep stops once nothing
 * is due). `?max=1`: a tick missed while every instance was down is not backfilled.
 */
const CRONTAB = [
  '7 * * * * baton_prune_idempotency ?max=1',
  '* * * * * baton_sweep_retention ?max=1',
  '* * * * * baton_purge_corpora ?max=1',
].join('\n');

export async function startBackgroundJobs(options: BackgroundJobOptions): Promise<BackgroundJobs> {
  const { pool, maintenance, wake, warn } = options;
  const taskList: TaskList = {
    baton_prune_idempotency: () => maintenance.pruneIdempotencyKeys().then(() => {}),
    baton_sweep_retention: () => maintenance.sweepRetention().then(() => {}),
    baton_purge_corpora: () => maintenance.purgeCorpora().then(() => {}),
    [RESUME_TASK]: async (payload) => {
      const workflowId = (payload as { workflowId?: unknown } | null)?.workflowId;
      if (typeof workflowId === 'string') await wake(workflowId);
    },
  };
  // The library logs through ours: errors and warnings only (a failed job is retried with backoff).
  const logger = new Logger(() => (level, message) => {
    if (level === 'error' || level === 'warning') warn(`background job: ${message}`);
  });
  const runner: Runner = await run({
    pgPool: pool,
    taskList,
    crontab: CRONTAB,
    concurrency: 2,
    // New jobs arrive by LISTEN/NOTIFY; the poll finds the ones whose time has come.
    pollInterval: 1000,
    noHandleSignals: true,
    logger,
  });
  let stopped: Promise<void> | undefined;
  return {
    async resumeAt(workflowId, at) {
      await runner.addJob(
        RESUME_TASK,
        { workflowId },
        // One pending resume per workflow: a later wait replaces an earlier one.
        { runAt: new Date(at), jobKey: `resume:${workflowId}`, maxAttempts: 5 },
      );
    },
    stop() {
      stopped ??= runner.stop();
      return stopped;
    },
  };
}
