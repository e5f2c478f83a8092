import { beforeEach, describe, expect, it } from 'vitest';
import { fixtureEvent } from '../../support/events.js';
import { newWorkflow, openMemoryStore, type StoreFixture } from '../../support/store-fixtures.js';

/**
 * What only the SQLite WorkflowStore does underneath the port (the port's promises are
 * test/contracts/workflow-store.contract.test.ts): the tenant is written on every journal row, for
 * the tenant-scoped analytics that read the table directly, and a broken insert surfaces SQLite's
 * own constraint error.
 */
let fx: StoreFixture;
beforeEach(() => {
  fx = openMemoryStore();
});

describe('SQLite workflow store', () => {
  it("writes each event's tenant on its journal row", async () => {
    const { workflow } = newWorkflow({ tenantId: 'acme' });
    await fx.store.create({ workflow, nodes: [] });
    const base = { workflowId: workflow.id, tenantId: 'acme', seq: 1, nodeId: null, at: 1_700_000_000_001 };
    await fx.store.commit({ events: [fixtureEvent(base, 'stepStart', { node: 'n', type: 'prompt', attempt: 1 })] });
    expect(fx.db.prepare('SELECT tenant_id FROM events').pluck().get()).toBe('acme');
  });

  it('rejects a duplicate node id with the primary-key constraint', async () => {
    const created = newWorkflow();
    const first = created.nodes[0]!;
    await expect(fx.store.create({ ...created, nodes: [first, { ...first }] })).rejects.toMatchObject({
      code: 'SQLITE_CONSTRAINT_PRIMARYKEY',
    });
  });
});
