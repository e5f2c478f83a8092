import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/domain/errors.js';
import type { NewWorkflow } from '../../src/domain/ports.js';
import type { WorkflowRecord } from '../../src/domain/records.js';
import { newWorkflow, type WorkflowOptions } from '../support/store-fixtures.js';
import { type OpenedStore, WORKFLOW_STORE_ADAPTERS } from './workflow-store-adapters.js';

/**
 * The WorkflowStore's queries, through the port, on every adapter (workflow-store-adapters.ts):
 * the tenant's list (newest first, an opaque cursor, filters), cancel cascading down a tree, the
 * roots to resume and a parent's children.
 */
let fx: OpenedStore;

/** Creates one after another so ids (and so creation order) follow the call order. */
async function create(options: WorkflowOptions = {}): Promise<WorkflowRecord> {
  const created: NewWorkflow = newWorkflow(options);
  await fx.store.create(created);
  return created.workflow;
}

async function allPages(tenantId: string, limit: number): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const page = await fx.store.list(tenantId, {}, cursor, limit);
    ids.push(...page.items.map((w) => w.id));
    cursor = page.nextCursor;
    pages++;
  } while (cursor !== null);
  return { ids, pages };
}

describe.each(WORKFLOW_STORE_ADAPTERS)('WorkflowStore queries: $name', (adapter) => {
  beforeEach(async () => {
    fx = await adapter.open();
  });
  afterEach(async () => {
    await fx.close();
  });

  describe('list', () => {
    it('pages through a tenant newest first with an opaque cursor', async () => {
      const mine: string[] = [];
      for (let i = 0; i < 7; i++) {
        mine.push((await create({ tenantId: 'acme' })).id);
        await create({ tenantId: 'globex' });
      }

      const firstPage = await fx.store.list('acme', {}, null, 3);
      expect(firstPage.items.map((w) => w.id)).toEqual(mine.slice(-3).reverse());
      expect(firstPage.nextCursor).toMatch(/^[A-Za-z0-9_-]+$/);

      expect(await allPages('acme', 3)).toEqual({ ids: [...mine].reverse(), pages: 3 });
      // A page that ends exactly on the last row has no next page.
      expect(await allPages('acme', 7)).toEqual({ ids: [...mine].reverse(), pages: 1 });
    });

    it('filters by status, name, correlation id and parent', async () => {
      const running = await create({ status: 'running', name: 'nightly', correlationId: 'batch-1' });
      const completed = await create({ status: 'completed', name: 'nightly' });
      const other = await create({ status: 'running', name: 'adhoc', correlationId: 'batch-1' });
      const child = await create({ parent: running, name: 'nightly' });
      await create({ tenantId: 'globex', status: 'running', name: 'nightly', correlationId: 'batch-1' });

      const ids = async (filter: Parameters<typeof fx.store.list>[1]) =>
        (await fx.store.list('tenant-a', filter, null, 50)).items.map((w) => w.id);

      expect(await ids({})).toEqual([child.id, other.id, completed.id, running.id]);
      expect(await ids({ status: 'running' })).toEqual([other.id, running.id]);
      expect(await ids({ name: 'nightly' })).toEqual([child.id, completed.id, running.id]);
      expect(await ids({ correlationId: 'batch-1' })).toEqual([other.id, running.id]);
      expect(await ids({ parentWorkflowId: running.id })).toEqual([child.id]);
      expect(await ids({ status: 'running', name: 'nightly', correlationId: 'batch-1' })).toEqual([running.id]);
    });

    it('combines a filter with the cursor', async () => {
      const failed: string[] = [];
      for (let i = 0; i < 5; i++) {
        failed.push((await create({ status: 'failed' })).id);
        await create({ status: 'completed' });
      }
      const first = await fx.store.list('tenant-a', { status: 'failed' }, null, 2);
      const second = await fx.store.list('tenant-a', { status: 'failed' }, first.nextCursor, 2);
      expect([...first.items, ...second.items].map((w) => w.id)).toEqual(failed.slice(1).reverse());
    });

    it.each(['not a cursor!', 'Zm9v=', '', '____'])('rejects the malformed cursor %j naming it', async (cursor) => {
      const attempt = fx.store.list('tenant-a', {}, cursor, 10);
      await expect(attempt).rejects.toBeInstanceOf(ValidationError);
      await expect(attempt).rejects.toMatchObject({ details: [{ path: 'cursor' }] });
    });

    it('rejects a limit that is not a positive integer', async () => {
      await expect(fx.store.list('tenant-a', {}, null, 0)).rejects.toMatchObject({ details: [{ path: 'limit' }] });
    });
  });

  describe('requestCancel', () => {
    it('flags the workflow and every descendant, and nothing else', async () => {
      const root = await create();
      const child = await create({ parent: root });
      const sibling = await create({ parent: root });
      const grandchild = await create({ parent: child });
      const unrelated = await create();

      expect(await fx.store.requestCancel(root.id)).toEqual([root.id, child.id, sibling.id, grandchild.id]);
      for (const id of [root.id, child.id, sibling.id, grandchild.id]) {
        expect((await fx.store.getById(id))?.cancelRequested).toBe(true);
      }
      expect((await fx.store.getById(unrelated.id))?.cancelRequested).toBe(false);
    });

    it('cascades down from a middle workflow only', async () => {
      const root = await create();
      const child = await create({ parent: root });
      const grandchild = await create({ parent: child });

      expect(await fx.store.requestCancel(child.id)).toEqual([child.id, grandchild.id]);
      expect((await fx.store.getById(root.id))?.cancelRequested).toBe(false);
    });

    it('returns no ids for an unknown workflow', async () => {
      expect(await fx.store.requestCancel('wf_missing')).toEqual([]);
    });
  });

  describe('resumable and children', () => {
    it('lists non-terminal root workflows oldest first', async () => {
      const idle = await create({ status: 'idle' });
      const running = await create({ status: 'running' });
      await create({ status: 'completed' });
      await create({ status: 'failed' });
      await create({ status: 'cancelled' });
      await create({ parent: running, status: 'running' });

      expect(await fx.store.resumable()).toEqual([
        { id: idle.id, tenantId: idle.tenantId },
        { id: running.id, tenantId: running.tenantId },
      ]);
    });
  });
});
