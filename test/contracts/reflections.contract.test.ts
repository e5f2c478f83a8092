import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newId } from '../../src/domain/ids.js';
import type { NewWorkflow } from '../../src/domain/ports.js';
import type { ReflectionEntry } from '../../src/domain/reflection.js';
import { newWorkflow } from '../support/store-fixtures.js';
import { WORKFLOW_STORE_ADAPTERS as ADAPTERS, type OpenedStore } from './workflow-store-adapters.js';

let fx: OpenedStore;
let created: NewWorkflow;
let stepId: string;

describe.each(ADAPTERS)('Reflections contract: $name', (adapter) => {
  afterEach(async () => {
    await fx.close();
  });

  beforeEach(async () => {
    fx = await adapter.open();
    created = newWorkflow({ tenantId: 'acme' });
    stepId = created.nodes[1]!.id;
    await fx.store.create(created);
  });

  function entry(fields: Partial<ReflectionEntry> = {}): ReflectionEntry {
    return {
      id: newId('rf'),
      workflowId: created.workflow.id,
      tenantId: 'acme',
      nodeId: stepId,
      nodeName: 'draft',
      attempt: 1,
      timestamp: 1_700_000_000_000,
      level: 'workflow',
      reason: 'the answer missed "severity"',
      error: { code: 'VALIDATION_FAILED', message: 'the answer does not match responseFormat' },
      resolution: {
        decision: 'retry',
        revisedPromptData: true,
        revisions: { promptData: { hint: 'include severity', nested: [1, { deep: null }] } },
      },
      success: null,
      ...fields,
    };
  }

  describe('reflections', () => {
    it('inserts entries through commit and reads them back unchanged, oldest first', async () => {
      const first = entry();
      const second = entry({
        attempt: 2,
        level: 'prompt',
        resolution: { decision: 'abort' },
        success: false,
        timestamp: 1_700_000_000_500,
      });
      const third = entry({ attempt: 3, level: 'agent', resolution: { decision: 'skip' }, success: true });
      // Committed out of order: the read orders by the time-ordered id, not by insertion.
      await fx.store.commit({ reflections: [third, first] });
      await fx.store.commit({ reflections: [second] });

      expect(await fx.store.reflections(created.workflow.id)).toEqual([first, second, third]);
    });

    it('keeps every workflow to its own history', async () => {
      const other = newWorkflow({ tenantId: 'acme' });
      await fx.store.create(other);
      const mine = entry();
      const theirs = entry({ workflowId: other.workflow.id, nodeId: other.nodes[1]!.id });
      await fx.store.commit({ reflections: [mine, theirs] });

      expect(await fx.store.reflections(created.workflow.id)).toEqual([mine]);
      expect(await fx.store.reflections(other.workflow.id)).toEqual([theirs]);
      expect(await fx.store.reflections('wf_missing')).toEqual([]);
    });

    it('records the outcome of the attempt that followed', async () => {
      const first = entry();
      const second = entry({ attempt: 2 });
      await fx.store.commit({ reflections: [first, second] });

      await fx.store.commit({ reflectionOutcomes: [{ id: first.id, success: false }] });
      await fx.store.commit({ reflectionOutcomes: [{ id: second.id, success: true }] });

      expect((await fx.store.reflections(created.workflow.id)).map((r) => r.success)).toEqual([false, true]);
    });

    it('commits an entry together with the node result and events of the same change set', async () => {
      const reflection = entry();
      await fx.store.commit({
        nodes: [{ id: stepId, status: 'running', attempts: 2 }],
        events: [
          {
            workflowId: created.workflow.id,
            tenantId: 'acme',
            seq: 1,
            type: 'reflectionEnd',
            nodeId: stepId,
            at: 1,
            payload: { level: 'workflow', node: 'draft', attempt: 1, decision: 'retry', success: true },
          },
        ],
        reflections: [reflection],
      });
      expect(await fx.store.reflections(created.workflow.id)).toEqual([reflection]);
      expect((await fx.store.nodes(created.workflow.id))[1]).toMatchObject({ status: 'running', attempts: 2 });
    });

    it('leaves no reflection behind when the node patch of its change set fails', async () => {
      const reflection = entry();
      const failing = fx.store.commit({
        nodes: [{ id: 'nd_missing', status: 'failed' }],
        reflections: [reflection],
      });
      await expect(failing).rejects.toMatchObject({ code: 'NOT_FOUND' });
      expect(await fx.store.reflections(created.workflow.id)).toEqual([]);
    });

    it('rolls back an inserted entry and the node patch when a later part of the change set fails', async () => {
      // The unknown outcome fails after the insert and the node patch ran: both must be undone.
      const failing = fx.store.commit({
        nodes: [{ id: stepId, status: 'failed', attempts: 1 }],
        reflections: [entry()],
        reflectionOutcomes: [{ id: 'rf_missing', success: true }],
      });
      // A change set of another run, batched in the same group commit, is not affected.
      const bystander = entry({ attempt: 2 });
      const other = fx.store.commit({ reflections: [bystander] });

      await expect(failing).rejects.toMatchObject({ code: 'NOT_FOUND' });
      await other;
      expect(await fx.store.reflections(created.workflow.id)).toEqual([bystander]);
      expect((await fx.store.nodes(created.workflow.id))[1]).toMatchObject({ status: 'idle', attempts: 0 });
    });

    it('rejects an entry for a node or workflow that does not exist', async () => {
      // A foreign key refuses both (the error is the driver's own: SQLITE_CONSTRAINT_FOREIGNKEY, or 23503).
      await expect(fx.store.commit({ reflections: [entry({ nodeId: 'nd_missing' })] })).rejects.toThrow(/foreign key/i);
      await expect(fx.store.commit({ reflections: [entry({ workflowId: 'wf_missing' })] })).rejects.toThrow(
        /foreign key/i,
      );
      expect(await fx.store.reflections(created.workflow.id)).toEqual([]);
    });

    it('refuses to read back a corrupt JSON column', async () => {
      const reflection = entry();
      await fx.store.commit({ reflections: [reflection] });
      await fx.setColumn('reflections', 'resolution', reflection.id, '{"decision":"maybe"}');
      await expect(fx.store.reflections(created.workflow.id)).rejects.toThrow();
    });
  });
});
