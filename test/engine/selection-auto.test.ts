import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../../src/metrics/selection.js';
import { buildTestApp, type TestApp, waitForStatus } from '../support/build-app.js';

/** `strategy: "auto"` over the real app (docs/workflows.md#agent-selection; rule: src/metrics/auto-strategy.ts). */
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({}, { random: seededRandom(7) });
});
afterAll(async () => {
  await t.close();
});

const workflow = (agent: unknown) => ({
  name: 'fix-bug',
  task: { type: 'bug_fix_task', complexity: 'simple' },
  options: { reflection: { enabled: false } },
  root: { type: 'prompt', name: 'fix', agent, user: 'Fix the bug' },
});

async function handoffSelection(agent: unknown): Promise<Record<string, unknown>> {
  const res = await t.app.inject({ method: 'POST', url: '/v1/workflows', payload: workflow(agent) });
  expect(res.statusCode, res.body).toBe(202);
  const { id, traceId } = res.json() as { id: string; traceId: string };
  await waitForStatus(t.app, id);
  const trace = (await t.app.inject({ method: 'GET', url: `/v1/traces/${traceId}` })).json() as {
    spans: Array<{ type: string; selection?: Record<string, unknown> }>;
  };
  const span = trace.spans.find((s) => s.type === 'handoff_span');
  if (!span?.selection) throw new Error('no selection on the handoff span');
  return span.selection;
}

describe('strategy auto', () => {
  it('without history resolves to thompson; the handoff span says auto, why, and the figures', async () => {
    for (const name of ['steady', 'other']) {
      const config = { model: 'sim/haiku', role: 'development', system: 'You fix bugs.' };
      expect((await t.app.inject({ method: 'POST', url: '/v1/agents', payload: { name, config } })).statusCode).toBe(
        201,
      );
    }
    const selection = await handoffSelection({ select: { role: 'development', strategy: 'auto' } });
    expect(selection.strategy).toBe('thompson');
    expect(selection.auto).toEqual({
      reason: 'insufficient_history',
      min_runs: 10,
      window_uses: 200,
      figures: [
        { strategy: 'greedy', runs: 0, rewarded_runs: 0, mean_aggregate_reward: null, success_rate: null },
        { strategy: 'thompson', runs: 0, rewarded_runs: 0, mean_aggregate_reward: null, success_rate: null },
        { strategy: 'cost_aware', runs: 0, rewarded_runs: 0, mean_aggregate_reward: null, success_rate: null },
      ],
    });
  });

  it('with history for thompson only, runs greedy next; its run counts for the strategy it resolved to', async () => {
    const selection = await handoffSelection({ select: { role: 'development', strategy: 'auto' } });
    expect(selection.strategy).toBe('greedy');
    const auto = selection.auto as { figures: Array<{ strategy: string; runs: number }> };
    expect(auto.figures.map((f) => [f.strategy, f.runs])).toEqual([
      ['greedy', 0],
      ['thompson', 1],
      ['cost_aware', 0],
    ]);
    const res = await t.app.inject({ method: 'GET', url: '/v1/analytics/selection?taskType=bug_fix_task' });
    expect(res.json().strategies.map((s: { runs: number }) => s.runs)).toEqual([1, 1, 0]);
  });
});
