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
  /** Sets one column of one row by hand (a corrupt or edited row, for the read checks). */
  setColumn(table: string, column: string, id: string, value: unknown): Promise<void>;
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
        setColumn: async (table, column, id, value) => {
          fx.db.prepare(`UPDATE ${table} SET ${column} = ? WHERE id = ?`).run(value, id);
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
        traces: createPostgresTraceStore(pool, committer),
        setColumn: async (table, column, id, value) => {
          await pool.query(`UPDATE ${table} SET ${column} = $1 WHERE id = $2`, [value, id]);
        },
        close: () => committer.drain(),
      };
    },
  },
];
