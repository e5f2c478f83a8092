import type { AgentRegistry, WorkflowStore } from '../../src/domain/ports.js';
import { createPostgresAgentRegistry } from '../../src/store/postgres/agents.js';
import { createPostgresWorkflowStore } from '../../src/store/postgres/workflows.js';
import { createSqliteAgentRegistry } from '../../src/store/sqlite/agents.repo.js';
import { emptyPostgresStore } from '../support/postgres-store.js';
import { openMemoryStore } from '../support/store-fixtures.js';

/** The AgentRegistry adapters the contract specs run against, each opened empty per test. */
export interface OpenedRegistry {
  /** Writes agent uses (with the workflow's creation), records and rewards, as the engine does. */
  store: WorkflowStore;
  registry: AgentRegistry;
  /**
   * Another registry over the same database, as a second instance has: on PostgreSQL its own
   * transactions on other connections; SQLite has one process, so the same registry.
   */
  second(): AgentRegistry;
  close(): Promise<void>;
}

/** A clock that ticks once per reading: creation times are distinct and ordered. */
const ticking = () => {
  let t = 1_700_000_000_000;
  return () => ++t;
};

export const AGENT_REGISTRY_ADAPTERS: Array<{ name: string; open(): Promise<OpenedRegistry> }> = [
  {
    name: 'sqlite',
    open: async () => {
      const fx = openMemoryStore();
      const registry = createSqliteAgentRegistry(fx.db, fx.committer, ticking());
      return {
        store: fx.store,
        registry,
        second: () => registry,
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
      const now = ticking();
      return {
        store: createPostgresWorkflowStore(pool, committer),
        registry: createPostgresAgentRegistry(pool, now),
        second: () => createPostgresAgentRegistry(pool, now),
        close: () => committer.drain(),
      };
    },
  },
];
