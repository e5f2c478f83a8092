import type { EngagementStore, MetricsStore, UsageAnalyticsStore, WorkflowStore } from '../../src/domain/ports.js';
import { createPostgresEngagementStore } from '../../src/store/postgres/engagement.js';
import { createPostgresMetricsStore } from '../../src/store/postgres/metrics.js';
import { createPostgresUsageAnalyticsStore } from '../../src/store/postgres/usage-analytics.js';
import { createPostgresWorkflowStore } from '../../src/store/postgres/workflows.js';
import { createSqliteEngagementStore } from '../../src/store/sqlite/engagement.repo.js';
import { createSqliteMetricsStore } from '../../src/store/sqlite/metrics.repo.js';
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
        close: () => committer.drain(),
      };
    },
  },
];
