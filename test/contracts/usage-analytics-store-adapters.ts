import type { EngagementStore, MetricsStore, UsageAnalyticsStore, WorkflowStore } from '../../src/domain/ports.js';
import { createPostgresEngagementStore } from '../../src/store/postgres/engagement.js';
import { createPostgresMetricsStore } from '../../src/store/postgres/metrics.js';
import { inTransaction } from '../../src/store/postgres/transaction.js';
import { createPostgresUsageAnalyticsStore, foldSweptUsage } from '../../src/store/postgres/usage-analytics.js';
import { createPostgresWorkflowStore } from '../../src/store/postgres/workflows.js';
import { WORKFLOW_OWNED_TABLES } from '../../src/store/retention.js';
import { createSqliteEngagementStore } from '../../src/store/sqlite/engagement.repo.js';
import { createSqliteMetricsStore } from '../../src/store/sqlite/metrics.repo.js';
import { createRetentionSweeper } from '../../src/store/sqlite/retention.repo.js';
import { createSqliteUsageAnalyticsStore } from '../../src/store/sqlite/usage-analytics.repo.js';
import { emptyPostgresStore } from '../support/postgres-store.js';
import { openMemoryStore } from '../support/store-fixtures.js';

/** The UsageAnalyticsStore and EngagementStore adapters the contract specs run against, opened empty. */
export interface OpenedAnalytics {
  /** Writes what the analytics read as the engine does: records, rewards, journal, tool calls, runs. */
  store: WorkflowStore;
  /** Feedback (it replaces rewards the analytics read). */
  metrics: MetricsStore;
  usage: UsageAnalyticsStore;
  engagement: EngagementStore;
  /**
   * Deletes the finished trees that ended before `cutoff` as retention does. On PostgreSQL this
   * stands in for its sweep, not built yet: the fold the sweep must run, then the deletes.
   */
  sweep(cutoff: number): Promise<number>;
  close(): Promise<void>;
}

export const USAGE_ANALYTICS_ADAPTERS: Array<{ name: string; open(): Promise<OpenedAnalytics> }> = [
  {
    name: 'sqlite',
    open: async () => {
      const fx = openMemoryStore();
      return {
        store: fx.store,
        metrics: createSqliteMetricsStore(fx.db, fx.committer),
        usage: createSqliteUsageAnalyticsStore(fx.db),
        engagement: createSqliteEngagementStore(fx.db),
        sweep: async (cutoff) => {
          const clock = { now: () => cutoff + 1, sleep: async () => {} };
          const sweeper = createRetentionSweeper(fx.db, fx.committer, { clock, retentionMs: 1, onError: () => {} });
          const done = await sweeper.sweepNow();
          sweeper.stop();
          return done.workflows;
        },
        close: async () => {
          fx.db.close();
        },
      };
    },
  },
  {
    name: 'postgres',
    open: async () => {
      const { pool, committer } = await emptyPostgresStore();
      return {
        store: createPostgresWorkflowStore(pool, committer),
        metrics: createPostgresMetricsStore(pool),
        usage: createPostgresUsageAnalyticsStore(pool),
        engagement: createPostgresEngagementStore(pool),
        sweep: async (cutoff) => {
          await committer.drain();
          const { rows } = await pool.query<{ id: string }>(
            `SELECT w.id FROM workflows r JOIN workflows w ON w.root_workflow_id = r.id
              WHERE r.parent_workflow_id IS NULL AND r.status IN ('completed', 'failed', 'cancelled') AND r.ended_at < $1`,
            [cutoff],
          );
          const ids = rows.map((r) => r.id);
          await inTransaction(pool, async (tx) => {
            await foldSweptUsage(tx, ids);
            for (const [table, column] of WORKFLOW_OWNED_TABLES) {
              await tx.query(`DELETE FROM ${table} WHERE ${column} = ANY($1::text[])`, [ids]);
            }
          });
          return ids.length;
        },
        close: () => committer.drain(),
      };
    },
  },
];
