import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newId } from '../../src/domain/ids.js';
import type { NewWorkflow } from '../../src/domain/ports.js';
import type { WorkflowRecord } from '../../src/domain/records.js';
import { fixtureEvent } from '../support/events.js';
import { newWorkflow, type WorkflowOptions } from '../support/store-fixtures.js';
import { WORKFLOW_STORE_ADAPTERS as ADAPTERS, type OpenedStore } from './workflow-store-adapters.js';

/**
 * What a run asks of every WorkflowStore adapter besides its commits: human checkpoint decisions
 * and reflections asked for by hand (conditional updates: racing callers have one winner), the
 * money limits' counts (requests taken before each call, requests sent by finished calls, the
 * tenant's real spend per day), and the tree queries of spawn limits and resumes.
 */
describe.each(ADAPTERS)('WorkflowStore runs contract: $name', (adapter) => {
  let fx: OpenedStore;
  beforeEach(async () => {
    fx = await adapter.open();
  });
  afterEach(async () => {
    await fx.close();
  });

  async function create(
    options: WorkflowOptions = {},
    edit: (w: NewWorkflow) => void = () => {},
  ): Promise<NewWorkflow> {
    const created = newWorkflow({ tenantId: 'acme', ...options });
    edit(created);
    await fx.store.create(created);
    return created;
  }

  describe('decideCheckpoint', () => {
    const pending = (w: NewWorkflow) => {
      w.workflow.checkpoint = { state: 'pending', reason: null, at: null };
    };

    it('settles a pending checkpoint once: of racing decisions exactly one wins', async () => {
      const { workflow } = await create({}, pending);
      const approve = { state: 'approved' as const, reason: 'ok', at: 5 };
      const reject = { state: 'rejected' as const, reason: 'no', at: 6 };
      const answers = await Promise.all([
        fx.store.decideCheckpoint('acme', workflow.id, approve),
        fx.store.decideCheckpoint('acme', workflow.id, reject),
      ]);
      expect(answers.map((a) => a?.decided).sort()).toEqual([false, true]);
      const winner = answers.find((a) => a?.decided);
      const stored = await fx.store.get('acme', workflow.id);
      expect(stored?.checkpoint).toEqual(winner?.workflow.checkpoint);
      // The loser sees the winner's decision, not its own.
      expect(answers.find((a) => !a?.decided)?.workflow.checkpoint).toEqual(stored?.checkpoint);
    });

    it('decides nothing for a cancelled, running or not pending workflow, and nothing across tenants', async () => {
      const cancelled = await create({}, (w) => {
        pending(w);
        w.workflow.cancelRequested = true;
      });
      const running = await create({ status: 'running' }, pending);
      const none = await create();
      const decision = { state: 'approved' as const, reason: null, at: 1 };
      for (const w of [cancelled, running, none]) {
        const answer = await fx.store.decideCheckpoint('acme', w.workflow.id, decision);
        expect(answer?.decided).toBe(false);
        expect(answer?.workflow.checkpoint).toEqual(w.workflow.checkpoint);
      }
      const other = await create({}, pending);
      expect(await fx.store.decideCheckpoint('globex', other.workflow.id, decision)).toBeUndefined();
    });
  });

  describe('requestReflection', () => {
    async function failed(): Promise<NewWorkflow> {
      return create({ status: 'failed' }, (w) => {
        w.workflow.error = { code: 'VALIDATION_FAILED', message: 'bad' };
        w.workflow.endedAt = 10;
        const step = w.nodes[1];
        if (step) step.status = 'failed';
      });
    }
    const request = (w: NewWorkflow, at = 20) => ({
      id: newId('rr'),
      workflowId: w.workflow.id,
      nodeId: w.nodes[1]?.id as string,
      reason: 'try again',
      requestedAt: at,
    });

    it('reopens a failed workflow once for racing requests, and records only the winner', async () => {
      const w = await failed();
      const first = request(w);
      const second = request(w);
      const answers = await Promise.all([
        fx.store.requestReflection('acme', first, 3),
        fx.store.requestReflection('acme', second, 3),
      ]);
      expect(answers.map((a) => a?.reopened).sort()).toEqual([false, true]);
      const stored = await fx.store.get('acme', w.workflow.id);
      expect(stored).toMatchObject({ status: 'running', error: null, output: null, endedAt: null });
      const winner = answers[0]?.reopened ? first : second;
      expect(await fx.store.reflectionRequest(w.workflow.id)).toEqual(winner);
      expect(await fx.store.reflectionRequestCounts(w.workflow.id)).toEqual(new Map([[winner.nodeId, 1]]));
    });

    it('holds the cap per node, and refuses a node that did not fail or another tenant', async () => {
      const w = await failed();
      expect((await fx.store.requestReflection('acme', request(w, 1), 1))?.reopened).toBe(true);
      await fx.store.commit({ workflows: [{ id: w.workflow.id, status: 'failed', endedAt: 30 }] });
      expect((await fx.store.requestReflection('acme', request(w, 2), 1))?.reopened).toBe(false);
      expect(await fx.store.requestReflection('globex', request(w, 3), 5)).toBeUndefined();
      const rootNode = { ...request(w, 4), nodeId: w.nodes[0]?.id as string };
      expect((await fx.store.requestReflection('acme', rootNode, 5))?.reopened).toBe(false);
      expect(await fx.store.reflectionRequestCounts(w.workflow.id)).toEqual(new Map([[w.nodes[1]?.id, 1]]));
    });
  });

  describe('money limits', () => {
    it('adds requests taken to the root, summed over change sets of one turn', async () => {
      const { workflow } = await create();
      await Promise.all([
        fx.store.commit({ requestsTaken: [{ rootWorkflowId: workflow.id, count: 1 }] }),
        fx.store.commit({ requestsTaken: [{ rootWorkflowId: workflow.id, count: 2 }] }),
      ]);
      await fx.store.commit({ requestsTaken: [{ rootWorkflowId: workflow.id, count: 1 }] });
      expect(await fx.store.requestsTaken(workflow.id)).toBe(4);
      expect(await fx.store.requestsTaken('wf_unknown')).toBe(0);
    });

    it('sums the requests of finished model calls from the journal', async () => {
      const { workflow } = await create();
      const end = (seq: number, requests: number) =>
        fixtureEvent({ workflowId: workflow.id, tenantId: 'acme', seq, nodeId: null, at: seq }, 'agentPromptEnd', {
          node: 'draft',
          agent: 'writer',
          model: 'sim/sonnet',
          simulated: true,
          attempt: 1,
          turn: 1,
          duration: 5,
          requests,
        });
      const start = fixtureEvent(
        { workflowId: workflow.id, tenantId: 'acme', seq: 1, nodeId: null, at: 1 },
        'stepStart',
        {
          node: 'draft',
          type: 'prompt',
          attempt: 1,
        },
      );
      await fx.store.commit({ events: [start, end(2, 3)] });
      await fx.store.commit({ events: [end(3, 2)] });
      expect(await fx.store.requestsSent(workflow.id)).toBe(5);
      expect(await fx.store.requestsSent('wf_unknown')).toBe(0);
    });

    it("keeps each tenant's real spend per UTC day", async () => {
      await Promise.all([
        fx.store.commit({ tenantSpend: [{ tenantId: 'acme', day: 20_000, costUsd: 0.25 }] }),
        fx.store.commit({ tenantSpend: [{ tenantId: 'acme', day: 20_000, costUsd: 0.5 }] }),
      ]);
      await fx.store.commit({
        tenantSpend: [
          { tenantId: 'acme', day: 20_001, costUsd: 1 },
          { tenantId: 'globex', day: 20_000, costUsd: 2 },
        ],
      });
      expect(await fx.store.tenantSpendUsd('acme', 20_000)).toBeCloseTo(0.75, 12);
      expect(await fx.store.tenantSpendUsd('acme', 20_001)).toBe(1);
      expect(await fx.store.tenantSpendUsd('globex', 20_000)).toBe(2);
      expect(await fx.store.tenantSpendUsd('initech', 20_000)).toBe(0);
    });
  });

  describe('tree queries', () => {
    it('counts children and descendants, and lists children oldest first', async () => {
      const root = (await create()).workflow;
      const child = (await create({ parent: root })).workflow;
      const done = (await create({ parent: root, status: 'completed' })).workflow;
      const grandchild = (await create({ parent: child })).workflow;
      expect(await fx.store.treeCounts(root.id, root.id)).toEqual({ children: 2, descendants: 3 });
      expect(await fx.store.treeCounts(child.id, root.id)).toEqual({ children: 1, descendants: 3 });
      const ids = (list: WorkflowRecord[]) => list.map((w) => w.id);
      expect(ids(await fx.store.children(root.id))).toEqual([child.id, done.id]);
      expect(ids(await fx.store.unfinishedChildren(root.id))).toEqual([child.id]);
      expect(ids(await fx.store.children(grandchild.id))).toEqual([]);
      expect((await fx.store.children(root.id))[0]).toEqual(child);
    });
  });
});
