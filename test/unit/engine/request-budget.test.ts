import { describe, expect, it } from 'vitest';
import { AppError } from '../../../src/domain/errors.js';
import {
  ownBudget,
  ownBudgetRefusal,
  RequestBudget,
  treeBudgetRefusal,
} from '../../../src/engine/run/request-budget.js';

function refusal(take: () => unknown): unknown {
  try {
    take();
  } catch (err) {
    return err;
  }
  return undefined;
}

describe('RequestBudget', () => {
  it('counts a request as soon as it is taken: the last one goes to one caller only', () => {
    const budget = new RequestBudget(0, 2, ownBudgetRefusal);
    budget.take();
    budget.take();
    const err = refusal(() => budget.take());
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('LLM_CALL_LIMIT_EXCEEDED');
  });

  it('a request given back (never sent) can be taken again; a sent one cannot', () => {
    const budget = new RequestBudget(0, 2, ownBudgetRefusal);
    const sent = budget.take();
    sent.send();
    const waiting = budget.take();
    waiting.giveBack();
    waiting.giveBack();
    // Giving back twice, or after sending, returns nothing more.
    sent.giveBack();
    budget.take().send();
    expect(refusal(() => budget.take())).toBeInstanceOf(AppError);
  });

  it('a resumed run starts from the requests earlier executions sent', () => {
    const budget = new RequestBudget(3, 4, ownBudgetRefusal);
    budget.take().send();
    expect(refusal(() => budget.take())).toBeInstanceOf(AppError);
  });

  it('a child budget draws on its tree: it never spends beyond what the tree has left', async () => {
    const recorded: number[] = [];
    const tree = new RequestBudget(1, 3, treeBudgetRefusal, undefined, async () => {
      recorded.push(1);
    });
    const child = new RequestBudget(0, 10, ownBudgetRefusal, tree);
    await child.take().send();
    const held = child.take();
    // The tree's last request is held by the child: the tree's other runs are refused meanwhile.
    const err = refusal(() => tree.take()) as AppError;
    expect(err.code).toBe('LLM_CALL_LIMIT_EXCEEDED');
    expect(err.message).toContain('tree');
    held.giveBack();
    await tree.take().send();
    expect((refusal(() => child.take()) as AppError).message).toContain('tree');
    // Only the tree records its requests durably, one per request sent, before the send resolves.
    expect(recorded).toEqual([1, 1]);
  });

  it("a child's own smaller budget refuses first and gives the tree's request back", () => {
    const tree = new RequestBudget(0, 3, treeBudgetRefusal);
    const child = new RequestBudget(0, 1, ownBudgetRefusal, tree);
    void child.take().send();
    expect((refusal(() => child.take()) as AppError).message).toContain('its limit allows');
    tree.take();
    tree.take();
    expect(refusal(() => tree.take())).toBeInstanceOf(AppError);
  });

  it('a claim sent twice, or sent after it was given back, counts and records nothing more', async () => {
    const recorded: number[] = [];
    const tree = new RequestBudget(0, 3, treeBudgetRefusal, undefined, async () => {
      recorded.push(1);
    });
    const sent = tree.take();
    await sent.send();
    await sent.send();
    const givenBack = tree.take();
    givenBack.giveBack();
    await givenBack.send();
    expect(recorded).toEqual([1]);
    // Two of the three requests are still there to take.
    tree.take();
    tree.take();
    expect(refusal(() => tree.take())).toBeInstanceOf(AppError);
  });

  it('says which budget refused, naming the limit', () => {
    expect(ownBudgetRefusal(7)).toBe(
      'the workflow has sent (or is sending) the 7 provider requests its limit allows (options.limits.maxLlmCalls)',
    );
    expect(treeBudgetRefusal(7)).toBe(
      "the workflow tree has sent (or is sending) the 7 provider requests its root's options.limits.maxLlmCalls " +
        'allows (one budget for the root and every child workflow under it)',
    );
  });

  it('ownBudget starts a resumed run from what it sent, and a fresh one from 0', () => {
    const resumed = ownBudget(2, 3);
    resumed.take();
    expect((refusal(() => resumed.take()) as AppError).message).toBe(ownBudgetRefusal(3));
    const fresh = ownBudget(undefined, 2);
    fresh.take();
    fresh.take();
    expect(refusal(() => fresh.take())).toBeInstanceOf(AppError);
  });
});
