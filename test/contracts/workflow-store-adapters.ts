import type { WorkflowStore } from '../../src/domain/ports.js';
import { openMemoryStore } from '../support/store-fixtures.js';

/** The WorkflowStore adapters the contract specs run against, each opened fresh per test. */
export interface OpenedStore {
  store: WorkflowStore;
  close(): Promise<void>;
}

export const WORKFLOW_STORE_ADAPTERS: Array<{ name: string; open(): Promise<OpenedStore> }> = [
  {
    name: 'sqlite',
    open: async () => {
      const fx = openMemoryStore();
      return {
        store: fx.store,
        close: async () => {
          fx.db.close();
        },
      };
    },
  },
];
