import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Totals } from '../../src/api/http/usage-totals.js';
import { definition, prompt, submit, waitForEvent } from '../support/api-fixtures.js';
import { buildTestApp, type TestApp, waitForStatus } from '../support/build-app.js';

/**
 * Totals where a person looks for them: the workflow view and the trace carry duration, provider
 * calls, tokens and cost — own and with children, real and simulated money apart — live while running.
 */
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => {
  await t.close();
});

const child = (name: string) => ({
  type: 'workflow',
  name,
  definition: {
    name,
    root: { type: 'sequence', name: `${name}-main`, steps: [prompt(`${name}-1`), prompt(`${name}-2`)] },
  },
});

describe('totals', () => {
  it('own and with children, in the workflow view and in the trace', async () => {
    const body = definition(
      { type: 'sequence', name: 'main', steps: [prompt('own'), child('kid')] },
      { options: { cache: false } },
    );
    const id = (await submit(t.app, body)).json().id as string;
    const view = await waitForStatus(t.app, id);
    const totals = view.totals as Totals;
    expect(totals).toMatchObject({ providerCalls: 1, costUsd: 0 });
    expect(totals.tokensIn).toBeGreaterThan(0);
    expect(totals.simulatedCostUsd).toBeGreaterThan(0);
    expect(totals.durationMs).toBe(view.durationMs);
    expect(totals.withChildren).toMatchObject({ providerCalls: 3, costUsd: 0 });
    expect(totals.withChildren.tokensIn).toBeGreaterThan(totals.tokensIn);

    const trace = (await t.app.inject({ method: 'GET', url: `/v1/traces/${view.traceId}` })).json();
    expect(trace.totals).toMatchObject({
      provider_calls: 1,
      tokens_in: totals.tokensIn,
      cost_usd: 0,
      with_children: { provider_calls: 3, tokens_in: totals.withChildren.tokensIn },
    });
    // The trace's own figures equal the sum of its generation spans.
    const generations = (trace.spans as Array<Record<string, unknown>>).filter((s) => s.type === 'generation_span');
    expect(generations.reduce((sum, s) => sum + Number(s.tokens_in), 0)).toBe(totals.withChildren.tokensIn);
  });

  it('live while running', async () => {
    const body = definition(
      {
        type: 'sequence',
        name: 'main',
        steps: [prompt('quick', { agent: 'fast' }), prompt('slow', { agent: 'slow' })],
      },
      { agents: { fast: { model: 'sim/haiku' }, slow: { model: 'sim/sonnet', simulate: { latencyMs: 10_000 } } } },
    );
    const id = (await submit(t.app, body)).json().id as string;
    await waitForEvent(t.app, id, (e) => e.type === 'agentPromptStart' && e.payload.node === 'slow');
    const running = (await t.app.inject({ method: 'GET', url: `/v1/workflows/${id}` })).json();
    expect(running.status).toBe('running');
    expect(running.totals.providerCalls).toBeGreaterThanOrEqual(1);
    expect(running.totals.tokensIn).toBeGreaterThan(0);
    expect(running.totals.durationMs).toBeGreaterThanOrEqual(0);
    await t.app.inject({ method: 'POST', url: `/v1/workflows/${id}/cancel` });
    await waitForStatus(t.app, id);
  });
});
