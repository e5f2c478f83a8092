import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AppError } from '../../src/domain/errors.js';
import type { WorkflowEvent } from '../../src/domain/events.js';
import { COMPLEXITY_ALLOCATIONS } from '../../src/routing/allocation.js';
import { fixtureEvent } from '../support/events.js';
import { newWorkflow, node } from '../support/store-fixtures.js';
import { WORKFLOW_STORE_ADAPTERS as ADAPTERS, type OpenedStore } from './workflow-store-adapters.js';

/**
 * What every WorkflowStore adapter promises, through the port alone: create with its nodes and an
 * idempotency key, tenant scoping, commit as one atomic change set (patches of present fields only,
 * new children, events), the journal's events by seq, and node order. Each adapter runs the same
 * cases (workflow-store-adapters.ts lists them); an adapter's internals are tested beside it in
 * test/unit/. The list, cancel and tree queries are workflow-store-queries.contract.test.ts.
 */
function event(
  workflowId: string,
  seq: number,
  payload: Record<string, unknown> = {},
  tenantId = 'tenant-a',
): WorkflowEvent {
  const base = { workflowId, tenantId, seq, nodeId: null, at: 1_700_000_000_000 + seq };
  return fixtureEvent(base, 'stepStart', { node: 'n', type: 'prompt', attempt: 1, ...payload });
}

describe.each(ADAPTERS)('WorkflowStore contract: $name', (adapter) => {
  let fx: OpenedStore;
  beforeEach(async () => {
    fx = await adapter.open();
  });
  afterEach(async () => {
    await fx.close();
  });

  describe('create, get and tenant scoping', () => {
    it('persists a workflow with its nodes and reads both back', async () => {
      const created = newWorkflow({ tenantId: 'acme', correlationId: 'batch-7' });
      const result = await fx.store.create(created);

      expect(result).toEqual({ kind: 'created', workflow: created.workflow });
      expect(await fx.store.get('acme', created.workflow.id)).toEqual(created.workflow);
      expect(await fx.store.getById(created.workflow.id)).toEqual(created.workflow);
      expect(await fx.store.nodes(created.workflow.id)).toEqual(created.nodes);
    });

    it('keeps the routing settled at planning, allocation and all ', async () => {
      const created = newWorkflow();
      created.workflow.routing = { complexity: 'critical', allocation: COMPLEXITY_ALLOCATIONS.critical };
      await fx.store.create(created);
      expect((await fx.store.getById(created.workflow.id))?.routing).toEqual({
        complexity: 'critical',
        allocation: COMPLEXITY_ALLOCATIONS.critical,
      });
    });

    it('hides a workflow from every other tenant but not from the engine', async () => {
      const { workflow } = newWorkflow({ tenantId: 'acme' });
      await fx.store.create({ workflow, nodes: [] });
      expect(await fx.store.get('globex', workflow.id)).toBeUndefined();
      expect(await fx.store.getById(workflow.id)).toMatchObject({ id: workflow.id, tenantId: 'acme' });
      expect(await fx.store.get('acme', 'wf_missing')).toBeUndefined();
    });

    it('writes nothing when one node of a new workflow is invalid', async () => {
      const created = newWorkflow();
      const first = created.nodes[0]!;
      const broken = { ...created, nodes: [first, { ...first }] }; // duplicate node id
      await expect(fx.store.create(broken)).rejects.toThrow();
      expect(await fx.store.getById(created.workflow.id)).toBeUndefined();
    });
  });

  describe('commit', () => {
    it('patches only the workflow fields that are present', async () => {
      const { workflow, nodes } = newWorkflow();
      await fx.store.create({ workflow, nodes });

      await fx.store.commit({ workflows: [{ id: workflow.id, status: 'running', startedAt: 10 }] });
      await fx.store.commit({ workflows: [{ id: workflow.id, output: { answer: [1, 'two'] }, endedAt: undefined }] });

      expect(await fx.store.getById(workflow.id)).toEqual({
        ...workflow,
        status: 'running',
        startedAt: 10,
        output: { answer: [1, 'two'] },
      });

      const failure = { code: 'NODE_TIMEOUT', message: 'step draft timed out' };
      await fx.store.commit({
        workflows: [
          { id: workflow.id, status: 'failed', error: failure, endedAt: 20, output: null, cancelRequested: true },
        ],
      });
      expect(await fx.store.getById(workflow.id)).toEqual({
        ...workflow,
        status: 'failed',
        startedAt: 10,
        endedAt: 20,
        output: null,
        error: failure,
        cancelRequested: true,
      });
    });

    it('patches only the node fields that are present', async () => {
      const { workflow, nodes } = newWorkflow();
      await fx.store.create({ workflow, nodes });
      const [root, step] = nodes as [(typeof nodes)[0], (typeof nodes)[0]];

      await fx.store.commit({ nodes: [{ id: step.id, attempts: 2 }] });
      await fx.store.commit({ nodes: [{ id: step.id, status: 'completed', output: 'done', endedAt: 5 }] });

      expect(await fx.store.nodes(workflow.id)).toEqual([
        root,
        { ...step, attempts: 2, status: 'completed', output: 'done', endedAt: 5 },
      ]);
    });

    it('applies new child workflows, patches and events of one step atomically', async () => {
      const parent = newWorkflow();
      await fx.store.create(parent);
      const parentNode = parent.nodes[1]!;
      const child = newWorkflow({ parent: parent.workflow, parentNodeId: parentNode.id });

      await fx.store.commit({
        newWorkflows: [child],
        nodes: [{ id: parentNode.id, childWorkflowId: child.workflow.id, status: 'running' }],
        events: [
          {
            ...event(parent.workflow.id, 1),
            type: 'childAttached',
            nodeId: parentNode.id,
            payload: { node: 'kid', childWorkflowId: child.workflow.id, name: 'kid' },
          },
        ],
      });

      expect(await fx.store.getById(child.workflow.id)).toEqual(child.workflow);
      expect((await fx.store.nodes(parent.workflow.id))[1]).toMatchObject({ childWorkflowId: child.workflow.id });
      expect(await fx.store.events(parent.workflow.id, 0, 10)).toHaveLength(1);
    });

    it('rejects a change set that patches an unknown row and keeps none of it', async () => {
      const { workflow, nodes } = newWorkflow();
      await fx.store.create({ workflow, nodes });

      const attempt = fx.store.commit({
        workflows: [{ id: workflow.id, status: 'running' }],
        nodes: [{ id: 'nd_missing', status: 'running' }],
      });
      await expect(attempt).rejects.toBeInstanceOf(AppError);
      await expect(attempt).rejects.toMatchObject({ code: 'NOT_FOUND' });
      expect(await fx.store.getById(workflow.id)).toMatchObject({ status: 'idle' });
    });

    it('rejects span writes of an unknown workflow and keeps none of the change set', async () => {
      const { workflow } = newWorkflow();
      await fx.store.create({ workflow, nodes: [] });
      const attempt = fx.store.commit({
        workflows: [{ id: workflow.id, status: 'running' }],
        spans: [
          {
            op: 'end',
            workflowId: 'wf_missing',
            tenantId: workflow.tenantId,
            spanId: 'sp_x',
            endedAt: 1,
            status: 'ok',
          },
        ],
      });
      await expect(attempt).rejects.toThrow();
      expect(await fx.store.getById(workflow.id)).toMatchObject({ status: 'idle' });
    });

    it('commits concurrent change sets of one turn together and fails only the bad one', async () => {
      const a = newWorkflow();
      const b = newWorkflow();
      await Promise.all([fx.store.create(a), fx.store.create(b)]);

      const results = await Promise.allSettled([
        fx.store.commit({ workflows: [{ id: a.workflow.id, status: 'running' }] }),
        fx.store.commit({ events: [event('wf_missing', 1)] }),
        fx.store.commit({ workflows: [{ id: b.workflow.id, status: 'completed' }] }),
      ]);

      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect((await fx.store.getById(a.workflow.id))?.status).toBe('running');
      expect((await fx.store.getById(b.workflow.id))?.status).toBe('completed');
    });
  });

  describe('events', () => {
    it('returns events in seq order and pages with `after`', async () => {
      const { workflow } = newWorkflow();
      await fx.store.create({ workflow, nodes: [] });
      expect(await fx.store.lastSeq(workflow.id)).toBe(0);

      await fx.store.commit({ events: [event(workflow.id, 1, { attempt: 7 }), event(workflow.id, 2)] });
      await fx.store.commit({ events: [event(workflow.id, 3)] });
      await fx.store.commit({ events: [event(workflow.id, 4), event(workflow.id, 5)] });

      const all = await fx.store.events(workflow.id, 0, 100);
      expect(all.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
      expect(all[0]).toEqual(event(workflow.id, 1, { attempt: 7 }));
      expect((await fx.store.events(workflow.id, 2, 2)).map((e) => e.seq)).toEqual([3, 4]);
      expect(await fx.store.events(workflow.id, 5, 10)).toEqual([]);
      expect(await fx.store.lastSeq(workflow.id)).toBe(5);
    });

    it('reads back text that JSON escapes as it was written', async () => {
      const { workflow } = newWorkflow();
      await fx.store.create({ workflow, nodes: [] });
      const node = 'quote " backslash \\ slash / tab \t newline \n \u2028 \u0001 é 🎉 \\u0000';
      await fx.store.commit({ events: [event(workflow.id, 1, { node })] });
      expect(await fx.store.events(workflow.id, 0, 10)).toEqual([event(workflow.id, 1, { node })]);
    });

    it('stores each event with its tenant', async () => {
      const { workflow } = newWorkflow({ tenantId: 'acme' });
      await fx.store.create({ workflow, nodes: [] });
      await fx.store.commit({ events: [event(workflow.id, 1, {}, 'acme')] });
      expect((await fx.store.events(workflow.id, 0, 10)).map((e) => e.tenantId)).toEqual(['acme']);
    });

    it('rejects a seq that is not after the stored ones, within a change set or across them', async () => {
      const { workflow } = newWorkflow();
      await fx.store.create({ workflow, nodes: [] });
      await fx.store.commit({ events: [event(workflow.id, 1), event(workflow.id, 2)] });
      await expect(fx.store.commit({ events: [event(workflow.id, 2)] })).rejects.toThrow(/not after the stored 2/);
      await expect(fx.store.commit({ events: [event(workflow.id, 4), event(workflow.id, 3)] })).rejects.toThrow(
        /seq 3 after 4/,
      );
      expect((await fx.store.events(workflow.id, 0, 10)).map((e) => e.seq)).toEqual([1, 2]);
    });

    it('keeps a spans-only row out of the event reads', async () => {
      const { workflow } = newWorkflow();
      await fx.store.create({ workflow, nodes: [] });
      await fx.store.commit({ events: [event(workflow.id, 1)] });
      await fx.store.commit({
        spans: [
          {
            op: 'end',
            workflowId: workflow.id,
            tenantId: workflow.tenantId,
            spanId: 'span_unknown',
            endedAt: 1,
            status: 'ok',
          },
        ],
      });
      expect(await fx.store.lastSeq(workflow.id)).toBe(1);
      await fx.store.commit({ events: [event(workflow.id, 2)] });
      expect((await fx.store.events(workflow.id, 0, 10)).map((e) => e.seq)).toEqual([1, 2]);
    });
  });

  describe('idempotency keys', () => {
    const DAY = 86_400_000;
    const claim = (bodyHash: string, notBefore = 0) => ({ key: 'order-1', bodyHash, notBefore });

    it('replays the original workflow for the same key and body', async () => {
      const original = newWorkflow();
      expect(await fx.store.create(original, claim('h1'))).toMatchObject({ kind: 'created' });

      const retry = newWorkflow();
      const result = await fx.store.create(retry, claim('h1'));

      expect(result).toEqual({ kind: 'replayed', workflow: original.workflow });
      expect(await fx.store.getById(retry.workflow.id)).toBeUndefined();
    });

    it('reports a conflict for the same key with another body', async () => {
      const original = newWorkflow();
      await fx.store.create(original, claim('h1'));
      const other = newWorkflow();
      expect(await fx.store.create(other, claim('h2'))).toEqual({ kind: 'conflict', workflowId: original.workflow.id });
      expect(await fx.store.getById(other.workflow.id)).toBeUndefined();
    });

    it('treats a key older than notBefore as absent and replaces it', async () => {
      const original = newWorkflow();
      await fx.store.create(original, claim('h1'));

      const later = newWorkflow();
      const expiredBefore = original.workflow.createdAt + DAY;
      expect(await fx.store.create(later, claim('h2', expiredBefore))).toMatchObject({ kind: 'created' });
      // The key now points at the new workflow and its body.
      expect(await fx.store.create(newWorkflow(), claim('h2'))).toEqual({ kind: 'replayed', workflow: later.workflow });
      expect(await fx.store.create(newWorkflow(), claim('h1'))).toEqual({
        kind: 'conflict',
        workflowId: later.workflow.id,
      });
    });

    it('prunes keys created before a time, and only those', async () => {
      const old = newWorkflow();
      await fx.store.create(old, claim('h1'));
      const cutoff = old.workflow.createdAt + 1;
      expect(await fx.store.pruneIdempotencyKeys(cutoff - 1)).toBe(0);
      expect(await fx.store.pruneIdempotencyKeys(cutoff)).toBe(1);
      // The key is gone: the same key with another body creates a new workflow instead of a conflict.
      expect(await fx.store.create(newWorkflow(), claim('h2'))).toMatchObject({ kind: 'created' });
    });

    it('scopes keys per tenant', async () => {
      await fx.store.create(newWorkflow({ tenantId: 'acme' }), claim('h1'));
      expect(await fx.store.create(newWorkflow({ tenantId: 'globex' }), claim('h2'))).toMatchObject({
        kind: 'created',
      });
    });

    it('creates once when the same key arrives twice in one turn', async () => {
      const first = newWorkflow();
      const second = newWorkflow();
      const [a, b] = await Promise.all([fx.store.create(first, claim('h1')), fx.store.create(second, claim('h1'))]);
      expect(a).toEqual({ kind: 'created', workflow: first.workflow });
      expect(b).toEqual({ kind: 'replayed', workflow: first.workflow });
    });
  });

  describe('node ordering', () => {
    it('returns nodes in creation order', async () => {
      const created = newWorkflow();
      const extra = node(created.workflow.id, { name: 'later', type: 'prompt', position: 1, depth: 1 });
      await fx.store.create({ ...created, nodes: [...created.nodes, extra] });
      expect((await fx.store.nodes(created.workflow.id)).map((n) => n.name)).toEqual(['main', 'draft', 'later']);
    });
  });
});
