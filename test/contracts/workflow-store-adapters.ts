import type { TraceStore, WorkflowStore } from '../../src/domain/ports.js';
import { createPostgresTraceStore } from '../../src/store/postgres/traces.js';
import { createPostgresWorkflowStore } from '../../src/store/postgres/workflows.js';
import { createSqliteTraceStore } from '../../src/store/sqlite/spans.repo.js';
import { emptyPostgresStore } from '../support/postgres-store.js';
import { openMemoryStore } from '../support/store-fixtures.js';

/** The WorkflowStore adapters the contract specs run against, each opened empty per test. */
export interface OpenedStore {
  store: WorkflowStore;
  traces: TraceStore;
  close(): Promise<void>;
}

export const WORKFLOW_STORE_ADAPTERS: Array<{ name: string; open(): Promise<OpenedStore> }> = [
  {
    name: 'sqlite',
    open: async () => {
      const fx = openMemoryStore();
      return {
        store: fx.store,
        traces: createSqliteTraceStore(fx.db, fx.committer),
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
        traces: createPostgresTraceStore(pool, committer),
        close: () => committer.drain(),
      };
    },
  },
];
