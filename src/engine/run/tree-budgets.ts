import { DEFAULTS, type WorkflowDefinition } from '../../domain/definition.js';
import type { WorkflowStore } from '../../domain/ports.js';
import type { WorkflowRecord } from '../../domain/records.js';
import { RequestBudget, treeBudgetRefusal } from './request-budget.js';

/** A definition's own request budget: its maxLlmCalls (default 200), never above the operator's ceiling. */
export function maxLlmCallsOf(definition: WorkflowDefinition, ceiling: number): number {
  return Math.min(definition.options?.limits?.maxLlmCalls ?? DEFAULTS.limits.maxLlmCalls, ceiling);
}

interface OpenTree {
  budget: Promise<RequestBudget>;
  /** Executions of this tree running in this process: the budget is dropped after the last. */
  users: number;
}

/**
 * The request budget of every workflow tree running in this process, one per root, shared by the
 * root's run and its children's (a child draws on the root's budget). Loaded from the
 * root's row (requests its tree took, durably, before sending them) when the tree's first execution
 * opens it; each request taken is added to that row before it is sent.
 */
export class TreeBudgets {
  private readonly trees = new Map<string, OpenTree>();

  constructor(
    private readonly store: Pick<WorkflowStore, 'commit' | 'getById' | 'requestsTaken'>,
    /** MAX_LLM_CALLS_PER_WORKFLOW. */
    private readonly ceiling: number,
  ) {}

  /**
   * The tree's budget for an execution of `workflow`; `close` it (once) when that execution ends.
   * `taken`: the requests the tree took, when known without a read (a root just submitted: 0).
   */
  async open(workflow: WorkflowRecord, taken?: number): Promise<{ budget: RequestBudget; close: () => void }> {
    const rootId = workflow.rootWorkflowId;
    let tree = this.trees.get(rootId);
    if (tree === undefined) {
      tree = { budget: this.load(workflow, taken), users: 0 };
      this.trees.set(rootId, tree);
    }
    tree.users++;
    const opened = tree;
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      opened.users--;
      // Stryker disable next-line ConditionalExpression: a tree leaves the map only when its last user closes, so a tree with none left is the one in the map
      if (opened.users === 0 && this.trees.get(rootId) === opened) this.trees.delete(rootId);
    };
    try {
      return { budget: await opened.budget, close };
    } catch (err) {
      close();
      throw err;
    }
  }

  private async load(workflow: WorkflowRecord, known?: number): Promise<RequestBudget> {
    const rootId = workflow.rootWorkflowId;
    // Stryker disable next-line ConditionalExpression: the root's row read back is the same workflow; the shortcut saves a read
    const root = rootId === workflow.id ? workflow : await this.store.getById(rootId);
    if (root === undefined) throw new Error(`workflow ${workflow.id}: its root ${rootId} has no row`);
    const taken = known ?? (await this.store.requestsTaken(rootId));
    const record = () => this.store.commit({ root: rootId, requestsTaken: [{ rootWorkflowId: rootId, count: 1 }] });
    return new RequestBudget(taken, maxLlmCallsOf(root.definition, this.ceiling), treeBudgetRefusal, undefined, record);
  }
}
