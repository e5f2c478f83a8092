import { describe, expect, it } from 'vitest';
import { DEV_TENANT } from '../../src/config.js';
import { ERROR_CODES } from '../../src/domain/errors.js';
import { useAnthropicTestApp, waitForStatus } from '../support/build-app.js';
import { textMessage } from '../support/fake-anthropic.js';
import { createManualClock } from '../support/manual-clock.js';

/**
 * TENANT_DAILY_BUDGET_USD: what a tenant's provider calls may cost in real money
 * per UTC day, from the stored per-call costs (MODEL_PRICES), through the real Anthropic SDK. Each
 * request below costs exactly $1 and its worst case is $1 too (input is priced 0, the answer is
 * max_tokens long): with a $5 budget the day allows exactly 5 requests, sequential or concurrent.
 */
const MODEL = 'anthropic/claude-sonnet-5-5';
const DAY_MS = 24 * 60 * 60 * 1000;
const utcDay = (ms: number) => Math.floor(ms / DAY_MS);
const BUDGET_USD = 5;
const MAX_TOKENS = 1000;
const clock = createManualClock();
const app = useAnthropicTestApp({
  env: {
    CONCURRENCY: '16',
    TENANT_DAILY_BUDGET_USD: String(BUDGET_USD),
    // $1000 per million output tokens: 1000 tokens cost $1.
    MODEL_PRICES: JSON.stringify({ [MODEL]: { input: 0, output: 1000 } }),
  },
  overrides: { clock },
});

function definition(kind: 'sequence' | 'parallel', prompts: number) {
  return {
    name: 'spend',
    agents: { a: { model: MODEL, maxTokens: MAX_TOKENS } },
    root: {
      type: kind,
      name: 'steps',
      steps: Array.from({ length: prompts }, (_, i) => ({
        type: 'prompt',
        name: `p${i}`,
        agent: 'a',
        user: `Step ${i}.`,
        optional: true,
      })),
    },
    options: { cache: false, reflection: { enabled: false } },
  };
}

async function run(body: unknown) {
  const res = await app.t.app.inject({ method: 'POST', url: '/v1/workflows', payload: body as object });
  expect(res.statusCode, res.body).toBe(202);
  return waitForStatus(app.t.app, res.json().id as string, undefined, 20_000);
}

function nodeCodes(done: Record<string, unknown>): Array<string | null> {
  const steps = (done.tree as { children: Array<{ error: { code: string } | null }> }).children;
  return steps.map((s) => s.error?.code ?? null);
}

describe('TENANT_DAILY_BUDGET_USD', () => {
  it('concurrent calls cannot overshoot the day together; the next UTC day allows calls again', async () => {
    // Every answer is held 150 ms (real time), so all 8 branches are in flight at once.
    app.fake.setDefault({ body: textMessage('ok', { input_tokens: 20, output_tokens: MAX_TOKENS }), delayMs: 150 });
    const day1 = await run(definition('parallel', 8));
    expect(app.fake.requests).toHaveLength(BUDGET_USD);
    const codes = nodeCodes(day1);
    expect(ERROR_CODES.TENANT_BUDGET_EXCEEDED).toMatchObject({ retryable: false, reflectable: false });
    expect(codes.filter((c) => c === null)).toHaveLength(BUDGET_USD);
    expect(codes.filter((c) => c === 'TENANT_BUDGET_EXCEEDED')).toHaveLength(8 - BUDGET_USD);
    expect(await app.t.deps.store.tenantSpendUsd(DEV_TENANT, utcDay(clock.now()))).toBe(BUDGET_USD);

    // Spent: the same day, the next call is refused before it is sent.
    const again = await run(definition('sequence', 2));
    expect(app.fake.requests).toHaveLength(BUDGET_USD);
    expect(nodeCodes(again)).toEqual(['TENANT_BUDGET_EXCEEDED', 'TENANT_BUDGET_EXCEEDED']);
    const error = (again.tree as { children: Array<{ error: { message: string } }> }).children[0]?.error;
    expect(error?.message).toContain('TENANT_DAILY_BUDGET_USD');

    // The next UTC day: a fresh budget, spent one request after another.
    await clock.advanceTo((utcDay(clock.now()) + 1) * DAY_MS);
    app.fake.requests.length = 0;
    app.fake.setDefault({ body: textMessage('ok', { input_tokens: 20, output_tokens: MAX_TOKENS }) });
    const day2 = await run(definition('sequence', 7));
    expect(app.fake.requests).toHaveLength(BUDGET_USD);
    expect(nodeCodes(day2)).toEqual([null, null, null, null, null, 'TENANT_BUDGET_EXCEEDED', 'TENANT_BUDGET_EXCEEDED']);
    expect(await app.t.deps.store.tenantSpendUsd(DEV_TENANT, utcDay(clock.now()))).toBe(BUDGET_USD);
  });
});
