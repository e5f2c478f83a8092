import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../../src/metrics/selection.js';
import { buildTestApp, type TestApp, waitForStatus } from '../support/build-app.js';

/**
 * Agent selection by past reward (docs/design.md#complexity-allocation-selection-and-review) over the real app:
 * history comes from real runs
 * (sim models: `steady` answers valid JSON, `flaky` and `fresh` fail with a provider 400) and
 * feedback through POST /v1/workflows/{id}/feedback (commit for good runs, revert for bad ones), so
 * `steady` is clearly the better-rewarded agent. Thompson draws come from a seeded source.
 */
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({}, { random: seededRandom(7) });
});
afterAll(async () => {
  await t.close();
});

const failing = { responses: Array.from({ length: 5 }, () => ({ error: { status: 400, message: 'refused' } })) };
const AGENTS = {
  steady: { model: 'sim/haiku', role: 'development', system: 'You fix bugs.' },
  flaky: { model: 'sim/haiku', role: 'development', system: 'You fix bugs, sometimes.', simulate: failing },
  fresh: { model: 'sim/haiku', role: 'development', system: 'You are new here.', simulate: failing },
};

const workflow = (agent: unknown) => ({
  name: 'fix-bug',
  task: { type: 'bug_fix_task', complexity: 'simple' },
  options: { reflection: { enabled: false } },
  root: {
    type: 'prompt',
    name: 'fix',
    agent,
    user: 'Fix the bug',
    responseFormat: { type: 'object', required: ['patch'], properties: { patch: { type: 'string' } } },
  },
});

interface Run {
  id: string;
  traceId: string;
  status: string;
  aggregate: number;
}

/** Submits, waits, and gives the feedback the chosen agent deserves; returns the recomputed reward. */
async function run(agent: unknown): Promise<Run> {
  const res = await t.app.inject({ method: 'POST', url: '/v1/workflows', payload: workflow(agent) });
  expect(res.statusCode, res.body).toBe(202);
  const { id, traceId } = res.json() as { id: string; traceId: string };
  const done = await waitForStatus(t.app, id);
  const actions = done.status === 'completed' ? ['commit'] : ['revert'];
  const fb = await t.app.inject({ method: 'POST', url: `/v1/workflows/${id}/feedback`, payload: { actions } });
  expect(fb.statusCode, fb.body).toBe(200);
  return { id, traceId, status: done.status, aggregate: fb.json().reward.aggregate_reward };
}

interface Handoff {
  to_agent: string;
  selection?: {
    strategy: string;
    role: string;
    task_type: string;
    complexity: string;
    candidates: Array<{
      agent: string;
      version: number | null;
      runs: number;
      mean_reward: number | null;
      score: number;
      successes?: number;
      expected_cost_usd?: number | null;
    }>;
    savings?: { reference: string | null; saved_usd: number | null; saved_simulated_usd: number | null };
  };
}
async function handoff(traceId: string): Promise<Handoff> {
  const trace = (await t.app.inject({ method: 'GET', url: `/v1/traces/${traceId}` })).json() as {
    spans: Array<Handoff & { type: string }>;
  };
  const span = trace.spans.find((s) => s.type === 'handoff_span');
  if (!span) throw new Error('no handoff span');
  return span;
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const round4 = (x: number) => Math.round(x * 10_000) / 10_000;

describe('agent selection', () => {
  const history: Record<string, number[]> = { steady: [], flaky: [] };
  const greedyRuns: Run[] = [];
  const thompsonRuns: Run[] = [];

  it('seeds history through real runs of registered agents and feedback', async () => {
    for (const [name, config] of Object.entries(AGENTS)) {
      const res = await t.app.inject({ method: 'POST', url: '/v1/agents', payload: { name, config } });
      expect(res.statusCode, res.body).toBe(201);
    }
    for (let i = 0; i < 3; i++) {
      for (const name of ['steady', 'flaky'] as const) {
        const r = await run(name);
        expect(r.status).toBe(name === 'steady' ? 'completed' : 'failed');
        history[name]?.push(r.aggregate);
      }
    }
    expect(mean(history.steady ?? [])).toBeGreaterThan(0.7);
    expect(mean(history.flaky ?? [])).toBeLessThan(-0.4);
  });

  it('greedy picks the better-rewarded agent; the handoff span shows every candidate’s score', async () => {
    const r = await run({ select: { role: 'development', candidates: ['flaky', 'steady'], strategy: 'greedy' } });
    greedyRuns.push(r);
    expect(r.status).toBe('completed');
    const span = await handoff(r.traceId);
    expect(span.to_agent).toBe('steady');
    expect(span.selection).toEqual({
      role: 'development',
      strategy: 'greedy',
      task_type: 'bug_fix_task',
      complexity: 'simple',
      candidates: [
        {
          agent: 'flaky',
          version: 1,
          runs: 3,
          mean_reward: round4(mean(history.flaky ?? [])),
          score: round4(mean(history.flaky ?? [])),
          successes: 0,
          expected_cost_usd: 0,
          expected_simulated_cost_usd: expect.any(Number),
        },
        {
          agent: 'steady',
          version: 1,
          runs: 3,
          mean_reward: round4(mean(history.steady ?? [])),
          score: round4(mean(history.steady ?? [])),
          successes: 3,
          expected_cost_usd: 0,
          expected_simulated_cost_usd: expect.any(Number),
        },
      ],
      // steady, 3 of 3, is the best-quality candidate and was chosen: nothing saved against it.
      savings: { reference: 'steady', saved_usd: 0, saved_simulated_usd: 0 },
    });
    // Without candidates: every registered agent of the role; `fresh` has no history (0.5).
    const all = await run({ select: { role: 'development' } });
    greedyRuns.push(all);
    const scores = (await handoff(all.traceId)).selection?.candidates.map((c) => [c.agent, c.score]);
    expect(scores).toEqual([
      ['flaky', expect.any(Number)],
      ['fresh', 0.5],
      ['steady', expect.any(Number)],
    ]);
    expect((await handoff(all.traceId)).to_agent).toBe('steady');
  });

  it('thompson tries the new candidate within 20 runs and converges to the better one', async () => {
    const chosen: string[] = [];
    for (let i = 0; i < 40; i++) {
      const r = await run({ select: { role: 'development', candidates: ['steady', 'fresh'], strategy: 'thompson' } });
      thompsonRuns.push(r);
      const span = await handoff(r.traceId);
      expect(span.selection?.strategy).toBe('thompson');
      expect(span.selection?.candidates.map((c) => c.agent)).toEqual(['steady', 'fresh']);
      chosen.push(span.to_agent);
    }
    const firstFresh = chosen.indexOf('fresh');
    expect(firstFresh).toBeGreaterThanOrEqual(0);
    expect(firstFresh).toBeLessThan(20);
    expect(chosen.slice(-10)).toEqual(Array(10).fill('steady'));
  });

  it('GET /v1/analytics/selection reports both strategies’ figures', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/analytics/selection?taskType=bug_fix_task' });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    const figures = (runs: Run[]) => {
      const successes = runs.filter((r) => r.status === 'completed').length;
      return {
        runs: runs.length,
        mean_aggregate_reward: round4(mean(runs.map((r) => r.aggregate))),
        success_rate: round4(successes / runs.length),
        cost_usd: 0,
        cost_per_success_usd: 0,
        simulated_cost_per_success_usd: expect.any(Number),
      };
    };
    expect(body).toMatchObject({
      task_type: 'bug_fix_task',
      strategies: [
        { strategy: 'greedy', ...figures(greedyRuns) },
        { strategy: 'thompson', ...figures(thompsonRuns) },
        { strategy: 'cost_aware', runs: 0 },
      ],
    });
    expect(body.strategies[1].success_rate).toBeLessThan(1);
    expect(body.strategies[0].success_rate).toBe(1);
    const other = await t.app.inject({ method: 'GET', url: '/v1/analytics/selection?taskType=other' });
    expect(other.json().strategies.map((s: { runs: number }) => s.runs)).toEqual([0, 0, 0]);
    const future = await t.app.inject({ method: 'GET', url: '/v1/analytics/selection?from=2999-01-01T00:00:00Z' });
    expect(future.json().strategies[0]).toMatchObject({ runs: 0, mean_aggregate_reward: null, success_rate: null });
    // The dashboard shows the same comparison over its window (every run here is recent).
    const all = (await t.app.inject({ method: 'GET', url: '/v1/analytics/selection' })).json();
    const dashboard = (await t.app.inject({ method: 'GET', url: '/v1/dashboard?days=90' })).json();
    expect(dashboard.selection).toEqual(all.strategies);
    expect(dashboard.selection.map((x: { runs: number }) => x.runs)).toEqual([
      greedyRuns.length,
      thompsonRuns.length,
      0,
    ]);
  });
});
