import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../../src/metrics/selection.js';
import { buildTestApp, type TestApp, waitForStatus } from '../support/build-app.js';

/**
 * `strategy: "cost_aware"` and its settings over the real app (docs/workflows.md#cost-aware-selection):
 * sim models (every run succeeds), so the warm-up and then the price decide. The learning loop on a
 * quality-sensitive provider is test/api/cost-aware-learning.test.ts.
 */
const KEYS = { acme: 'key-of-acme-0123456789', other: 'key-of-other-0123456789' };
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp(
    {
      API_KEYS: `acme:${KEYS.acme},other:${KEYS.other}`,
      COST_AWARE_DEFAULTS: JSON.stringify({ '*': { tolerance: 0.04, confidence: 0.8 }, acme: { tolerance: 0.05 } }),
    },
    { random: seededRandom(11) },
  );
  for (const key of Object.values(KEYS)) {
    for (const [name, model] of [
      ['pricey', 'sim/opus'],
      ['thrifty', 'sim/haiku'],
    ]) {
      const config = { model, role: 'development', system: 'You fix bugs.' };
      const res = await t.app.inject({
        method: 'POST',
        url: '/v1/agents',
        headers: { authorization: `Bearer ${key}` },
        payload: { name, config },
      });
      expect(res.statusCode, res.body).toBe(201);
    }
  }
});
afterAll(async () => {
  await t.close();
});

const workflow = (select: Record<string, unknown>) => ({
  name: 'fix',
  task: { type: 'bug_fix_task', complexity: 'simple' },
  options: { reflection: { enabled: false } },
  root: {
    type: 'prompt',
    name: 'fix',
    agent: { select: { role: 'development', candidates: ['pricey', 'thrifty'], ...select } },
    user: 'Fix the bug',
  },
});

interface SelectionView {
  strategy: string;
  cost_aware?: { tolerance: number; confidence: number; reason: string; leader: string };
  auto?: { reason: string };
  candidates: Array<{ agent: string; runs: number; expected_simulated_cost_usd: number | null }>;
  savings?: { reference: string | null; saved_usd: number | null; saved_simulated_usd: number | null };
}

async function select(tenant: keyof typeof KEYS, settings: Record<string, unknown>) {
  const headers = { authorization: `Bearer ${KEYS[tenant]}` };
  const res = await t.app.inject({ method: 'POST', url: '/v1/workflows', headers, payload: workflow(settings) });
  expect(res.statusCode, res.body).toBe(202);
  const { id, traceId } = res.json() as { id: string; traceId: string };
  expect((await waitForStatus(t.app, id, undefined, 5_000, headers)).status).toBe('completed');
  const trace = (await t.app.inject({ method: 'GET', url: `/v1/traces/${traceId}`, headers })).json() as {
    spans: Array<{ type: string; to_agent: string; selection?: SelectionView }>;
  };
  const span = trace.spans.find((s) => s.type === 'handoff_span');
  if (!span?.selection) throw new Error('no selection on the handoff span');
  return { agent: span.to_agent, selection: span.selection };
}

describe('cost_aware selection', () => {
  it('warms up every candidate (the cheaper first), then keeps the cheaper one when both always succeed', async () => {
    const chosen: string[] = [];
    const reasons: string[] = [];
    for (let i = 0; i < 10; i++) {
      const { agent, selection } = await select('acme', { strategy: 'cost_aware' });
      chosen.push(agent);
      reasons.push(selection.cost_aware?.reason ?? '');
    }
    expect(chosen.slice(0, 6).sort()).toEqual(['pricey', 'pricey', 'pricey', 'thrifty', 'thrifty', 'thrifty']);
    expect(chosen[0]).toBe('thrifty');
    expect(reasons.slice(0, 6)).toEqual(Array(6).fill('warm_up'));
    expect(chosen.slice(6)).toEqual(Array(4).fill('thrifty'));
    expect(reasons.slice(6).every((r) => r === 'leader_cheapest' || r === 'cheaper_within_tolerance')).toBe(true);
  });

  it('the span shows expected costs and the saving against the best-quality candidate, simulated money apart', async () => {
    const { selection } = await select('acme', { strategy: 'cost_aware' });
    const [pricey, thrifty] = selection.candidates;
    expect(pricey?.expected_simulated_cost_usd).toBeGreaterThan(thrifty?.expected_simulated_cost_usd ?? Infinity);
    // Both 100% successful: the reference is the one with more runs (thrifty), and it was chosen.
    expect(selection.savings).toEqual({ reference: 'thrifty', saved_usd: 0, saved_simulated_usd: 0 });
  });

  it('tolerance and confidence: the prompt’s, else the tenant’s, else `*`’s', async () => {
    expect((await select('acme', { strategy: 'cost_aware' })).selection.cost_aware).toMatchObject({
      tolerance: 0.05,
      confidence: 0.8,
    });
    expect((await select('other', { strategy: 'cost_aware' })).selection.cost_aware).toMatchObject({
      tolerance: 0.04,
      confidence: 0.8,
    });
    const own = await select('acme', { strategy: 'cost_aware', tolerance: 0.01, confidence: 0.95 });
    expect(own.selection.cost_aware).toMatchObject({ tolerance: 0.01, confidence: 0.95 });
  });

  it('tolerance with greedy or thompson is a 400 naming the field', async () => {
    const headers = { authorization: `Bearer ${KEYS.acme}` };
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/workflows',
      headers,
      payload: workflow({ strategy: 'greedy', tolerance: 0.05 }),
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toBe('root.agent.select.tolerance: applies to strategy "cost_aware" (or "auto") only');
  });

  it('auto: greedy and thompson until each has 10 rewarded runs, then cost_aware', async () => {
    const strategies: string[] = [];
    for (let i = 0; i < 21; i++) {
      const { selection } = await select('other', { strategy: 'auto' });
      strategies.push(selection.strategy);
      if (i === 20) expect(selection.auto?.reason).toBe('enough_history');
    }
    expect(strategies.slice(0, 20).filter((s) => s === 'greedy')).toHaveLength(10);
    expect(strategies.slice(0, 20).filter((s) => s === 'thompson')).toHaveLength(10);
    expect(strategies[20]).toBe('cost_aware');
  });
});
