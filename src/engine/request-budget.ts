import { AppError } from '../domain/errors.js';

/**
 * A run's budget of provider requests (`limits.maxLlmCalls`, DESIGN §9: a limit on money). A call
 * takes its next request from the budget before it waits for a concurrency slot, and the taking is
 * counted at once: calls running side by side (parallel branches, reviewers) cannot all pass the
 * check for the last request while none has sent yet, then all send. A request taken but never sent
 * (the call was cancelled or timed out while it waited) is given back; a call refused meanwhile stays
 * refused — the cap errs on the side of money.
 */
export class RequestBudget {
  /** Taken by calls that have not sent them yet. */
  private held = 0;

  constructor(
    /** Requests sent so far, earlier executions' included: a resumed run keeps paying from the same budget. */
    private sentSoFar: number,
    private readonly limit: number,
  ) {}

  /** Takes one request, or refuses with LLM_CALL_LIMIT_EXCEEDED when every request is sent or taken. */
  take(): RequestClaim {
    if (this.sentSoFar + this.held >= this.limit) {
      throw new AppError(
        'LLM_CALL_LIMIT_EXCEEDED',
        `the workflow has sent (or is sending) the ${this.limit} provider requests its limit allows (options.limits.maxLlmCalls)`,
      );
    }
    this.held++;
    let open = true;
    const close = () => {
      if (open) this.held--;
      open = false;
    };
    return {
      send: () => {
        close();
        this.sentSoFar++;
      },
      giveBack: close,
    };
  }
}

/** One request taken from a RequestBudget: `send` it when it goes out (once), else `giveBack` (any number of times). */
export interface RequestClaim {
  send(): void;
  giveBack(): void;
}
