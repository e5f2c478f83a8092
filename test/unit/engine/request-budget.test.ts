import { describe, expect, it } from 'vitest';
import { AppError } from '../../../src/domain/errors.js';
import { RequestBudget } from '../../../src/engine/request-budget.js';

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
    const budget = new RequestBudget(0, 2);
    budget.take();
    budget.take();
    const err = refusal(() => budget.take());
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('LLM_CALL_LIMIT_EXCEEDED');
  });

  it('a request given back (never sent) can be taken again; a sent one cannot', () => {
    const budget = new RequestBudget(0, 2);
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
    const budget = new RequestBudget(3, 4);
    budget.take().send();
    expect(refusal(() => budget.take())).toBeInstanceOf(AppError);
  });
});
