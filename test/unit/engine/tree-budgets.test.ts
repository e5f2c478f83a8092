import { describe, expect, it } from 'vitest';
import type { WorkflowRecord } from '../../../src/domain/records.js';
import { TreeBudgets } from '../../../src/engine/run/tree-budgets.js';

/**
 * One request budget per workflow tree in this process (docs/design.md#replay-after-a-crash): every
 * execution of the tree open at once shares it, and the first one to open after the last closed
 * loads it again from the requests the store recorded.
 */
const ROOT = 'wf_root';

function workflow(id: string, maxLlmCalls = 5): WorkflowRecord {
  return {
    id,
    rootWorkflowId: ROOT,
    definition: {
      name: id,
      root: { type: 'prompt', name: 'p', agent: 'a', user: 'u' },
      options: { limits: { maxLlmCalls } },
    },
  } as unknown as WorkflowRecord;
}

function storeWith(taken: number) {
  const store = {
    loads: 0,
    committed: [] as unknown[],
    async getById(id: string) {
      return id === ROOT ? workflow(ROOT) : undefined;
    },
    async requestsTaken() {
      store.loads++;
      return taken;
    },
    async commit(batch: unknown) {
      store.committed.push(batch);
    },
  };
  return store;
}

describe('TreeBudgets', () => {
  it('shares one budget among the executions of a tree open at once, and records each request sent', async () => {
    const store = storeWith(1);
    const budgets = new TreeBudgets(store, 100);
    const root = await budgets.open(workflow(ROOT));
    const child = await budgets.open(workflow('wf_child'));
    expect(child.budget).toBe(root.budget);
    expect(store.loads).toBe(1);
    await child.budget.take().send();
    // Under the root's lease (scaled out, the fence admits it only while this instance runs the tree).
    expect(store.committed).toEqual([{ root: ROOT, requestsTaken: [{ rootWorkflowId: ROOT, count: 1 }] }]);
  });

  it('keeps the budget while any execution has it open, closing twice counting once', async () => {
    const budgets = new TreeBudgets(storeWith(0), 100);
    const first = await budgets.open(workflow(ROOT));
    const second = await budgets.open(workflow('wf_child'));
    first.close();
    first.close();
    const third = await budgets.open(workflow('wf_other_child'));
    expect(third.budget).toBe(second.budget);
  });

  it('loads the budget again from the store once the last execution closed it', async () => {
    const store = storeWith(4);
    const budgets = new TreeBudgets(store, 100);
    const first = await budgets.open(workflow(ROOT));
    first.close();
    const again = await budgets.open(workflow(ROOT));
    expect(again.budget).not.toBe(first.budget);
    expect(store.loads).toBe(2);
    // 4 of the root's 5 were taken before: one is left.
    again.budget.take();
    expect(() => again.budget.take()).toThrow(/tree/);
  });

  it("caps a tree's budget at the operator's ceiling and reads the root's own definition for a child", async () => {
    const budgets = new TreeBudgets(storeWith(0), 2);
    const { budget } = await budgets.open(workflow('wf_child', 50));
    budget.take();
    budget.take();
    expect(() => budget.take()).toThrow(/the 2 provider requests/);
  });

  it('fails naming the workflow when its root has no row', async () => {
    const store = storeWith(0);
    store.getById = async () => undefined;
    const budgets = new TreeBudgets(store, 100);
    await expect(budgets.open(workflow('wf_orphan'))).rejects.toThrow(
      'workflow wf_orphan: its root wf_root has no row',
    );
  });
});
