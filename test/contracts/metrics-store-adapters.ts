import type { MetricsStore, WorkflowStore } from '../../src/domain/ports.js';
import { createPostgresMetricsStore } from '../../src/store/postgres/metrics.js';
import { createPostgresWorkflowStore } from '../../src/store/postgres/workflows.js';
import { createSqliteMetricsStore } from '../../src/store/sqlite/metrics.repo.js';
import { emptyPostgresStore } from '../support/postgres-store.js';
import { openMemoryStore } from '../support/store-fixtures.js';

/** A feedback row as stored: the store writes it; only the reward recomputation reads it. */
export interface FeedbackRow {
  workflow_id: string;
  tenant_id: string;
  actions: string;
}

/** The MetricsStore adapters the contract specs run against, each opened empty per test. */
export interface OpenedMetrics {
  /** Writes the records and rewards as the engine does: in the workflow store's commit. */
  store: WorkflowStore;
  metrics: MetricsStore;
  feedbackRows(): Promise<FeedbackRow[]>;
  close(): Promise<void>;
}

export const METRICS_STORE_ADAPTERS: Array<{ name: string; open(): Promise<OpenedMetrics> }> = [
  {
    name: 'sqlite',
    open: async () => {
      const fx = openMemoryStore();
      return {
        store: fx.store,
        metrics: createSqliteMetricsStore(fx.db, fx.committer),
        feedbackRows: async () =>
          fx.db.prepare('SELECT workflow_id, tenant_id, actions FROM feedback ORDER BY id').all() as FeedbackRow[],
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
        feedbackRows: async () =>
          (await pool.query<FeedbackRow>('SELECT workflow_id, tenant_id, actions FROM feedback ORDER BY id')).rows,
        close: () => committer.drain(),
      };
    },
  },
];
