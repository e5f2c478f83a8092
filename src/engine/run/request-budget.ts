import { AppError } from '../../domain/errors.js';

/**
 * A budget of provider requests (`limits.maxLlmCalls`, docs/design.md#events-spans-metrics-and-rewards: a limit on
 * money). A call takes
 * its next request from the budget before it waits for a concurrency slot, and the taking is
 * counted at once: calls running side by side (parallel branches, reviewers, children) cannot all
 * pass the check for the last request while none has sent yet, then all send. A request taken but
 * never sent (the call was cancelled or timed out while it waited) is given back; a call refused
 * meanwhile stays refused — the cap errs on the side of money.
 *
 * Budgets nest: a run's own budget (its definition's maxLlmCalls) draws on its tree's (the root's
 * maxLlmCalls, shared by the root and every declared or spawned child, nested): a child
 * never spends beyond what the root has left. The tree's budget records each request durably
 * (`record`) before it is sent, so a tree resumed after a crash keeps paying from the same budget.
 */
export class RequestBudget {
  /** Taken by calls that have not sent them yet. */
  private held = 0;

  constructor(
    /** Requests sent so far, earlier executions' included: a resumed run keeps paying from the same budget. */
    private sentSoFar: number,
    private readonly limit: number,
    private readonly refusal: (limit: number) => string,
    private readonly parent?: RequestBudget,
    /** Makes one sent request durable; awaited before the request goes out. */
    private readonly record?: () => Promise<void>,
  ) {}

  /** Takes one request here and from every enclosing budget, or refuses with LLM_CALL_LIMIT_EXCEEDED. */
  take(): RequestClaim {
    // The tree first: its refusal says what ran out (the tree's budget, not this workflow's).
    const outer = this.parent?.take();
    if (this.sentSoFar + this.held >= this.limit) {
      outer?.giveBack();
      throw new AppError('LLM_CALL_LIMIT_EXCEEDED', this.refusal(this.limit));
    }
    this.held++;
    let open = true;
    const close = () => {
      if (open) this.held--;
      open = false;
    };
    return {
      send: async () => {
        if (!open) return;
        close();
        this.sentSoFar++;
        await outer?.send();
        await this.record?.();
      },
      giveBack: () => {
        close();
        outer?.giveBack();
      },
    };
  }
}

/**
 * One request taken from a RequestBudget: `send` it when it goes out (once; awaited: it is recorded
 * durably first), else `giveBack` (any number of times; nothing once it was sent).
 */
export interface RequestClaim {
  send(): Promise<void>;
  giveBack(): void;
}

/**
 * A run's own budget (its definition's maxLlmCalls, under the service's ceiling), drawing on its
 * tree's. `requestsSent` are those its earlier executions sent: a resumed run keeps paying from the
 * budget it had (docs/design.md#replay-after-a-crash), never from a fresh one.
 */
export function ownBudget(requestsSent: number | undefined, limit: number, tree?: RequestBudget): RequestBudget {
  return new RequestBudget(requestsSent ?? 0, limit, ownBudgetRefusal, tree);
}

/** The message of a workflow's own budget refusing. */
export const ownBudgetRefusal = (limit: number): string =>
  `the workflow has sent (or is sending) the ${limit} provider requests its limit allows (options.limits.maxLlmCalls)`;

/** The message of a tree's budget refusing. */
export const treeBudgetRefusal = (limit: number): string =>
  `the workflow tree has sent (or is sending) the ${limit} provider requests its root's options.limits.maxLlmCalls ` +
  'allows (one budget for the root and every child workflow under it)';
