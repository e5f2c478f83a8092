import type { EngagementStore, MetricsStore, UsageAnalyticsStore, WorkflowStore } from '../../src/domain/ports.js';
import { createPostgresEngagementStore } from '../../src/store/postgres/engagement.js';
import { createPostgresMetricsStore } from '../../src/store/postgres/metrics.js';
import { createPostgresRetentionSweeper } from '../../src/store/postgres/retention.js';
import { createPostgresUsageAnalyticsStore } from '../../src/store/postgres/usage-analytics.js';
import { createPostgresWorkflowStore } from '../../src/store/postgres/workflows.js';
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
  /** Runs the store's retention sweep: the finished trees that ended before `cutoff` go. */
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
          const clock = { now: () => cutoff + 1, sleep: async () => {} };
          const sweeper = createPostgresRetentionSweeper(committer, { clock, retentionMs: 1, onError: () => {} });
          const done = await sweeper.sweepNow();
          sweeper.stop();
          return done.workflows;
        },
        close: () => committer.drain(),
      };
    },
  },
];
