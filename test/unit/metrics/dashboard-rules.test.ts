import { describe, expect, it } from 'vitest';
import type { DashboardSums, ModelSums, ToolAgentSums } from '../../../src/domain/usage-analytics.js';
import { buildDashboard, previousLabel, trendDisplay } from '../../../src/metrics/dashboard.js';
import { modelReport, percentile, toolReport } from '../../../src/metrics/tool-insights.js';

/** The named rules of the dashboard and the tool insights, at and around their thresholds. */

const sc = (sum: number, count: number) => ({ sum, count });
function sums(extra: Partial<DashboardSums> = {}): DashboardSums {
  return {
    tasks: 10,
    successes: 9,
    efficiencyScore: 8,
    agentsSpawned: 20,
    totalAgentCalls: 30,
    wallTimeSeconds: 100,
    recoveryRate: sc(0, 0),
    goalAdherence: sc(9, 10),
    toolSelection: sc(10, 10),
    qualityGates: sc(0, 0),
    costUsd: 0.5,
    simulatedCostUsd: 0.25,
    rewards: { count: 10, outcome: 5, preference: sc(0, 0) },
    toolCalls: sc(9, 10),
    retrievalRelevance: sc(8, 10),
    guardrails: sc(19, 20),
    cache: { hits: 10, tokensSaved: 100, costSavedUsd: 0.1, simulatedCostSavedUsd: 0 },
    byTaskModel: [],
    byTaskComplexity: [],
    ...extra,
  };
}

describe('dashboard rules', () => {
  it('display strings: relative percent, agents as a signed difference, missing windows', () => {
    expect(trendDisplay('efficiency', { current: 0.84, previous: 0.75, change: 0.12, kind: 'relative' }, 7)).toBe(
      '+12% vs previous week',
    );
    expect(trendDisplay('success_rate', { current: 0.5, previous: 1, change: -0.5, kind: 'relative' }, 3)).toBe(
      '-50% vs previous 3 days',
    );
    expect(trendDisplay('avg_agents_per_task', { current: 1.2, previous: 2, change: -0.8, kind: 'absolute' }, 7)).toBe(
      '-0.8 (improving)',
    );
    expect(trendDisplay('avg_agents_per_task', { current: 2, previous: 1.5, change: 0.5, kind: 'absolute' }, 7)).toBe(
      '+0.5 (worsening)',
    );
    expect(trendDisplay('recovery_rate', { current: 1, previous: null, change: null, kind: 'relative' }, 14)).toBe(
      'n/a (no data in the previous 2 weeks)',
    );
    expect(previousLabel(1)).toBe('previous day');
  });

  it('areas for improvement: pillars below target, slow and weak task types, blind axes', () => {
    const d = buildDashboard(
      sums({
        byTaskComplexity: [
          {
            taskType: 'refactor',
            complexity: 'complex',
            tasks: 5,
            successes: 3,
            efficiencyScore: 2,
            wallTimeSeconds: 18_000,
          },
          {
            taskType: 'tiny',
            complexity: 'trivial',
            tasks: 4,
            successes: 0,
            efficiencyScore: 0,
            wallTimeSeconds: 10_000,
          },
        ],
      }),
      sums(),
      7,
    );
    expect(d.areas_for_improvement).toEqual([
      'complex refactor tasks taking 2.0x expected time',
      'refactor efficiency below baseline (0.40 vs 0.60 target)',
      'refactor success rate 0.60 below 0.80 target',
      'Memory retrieval relevance below 0.85 target (0.80)',
      'Technical axis: 1 of 3 figures without data (recovery_rate)',
      'Human-centered axis: 1 of 2 figures without data (preference_reward)',
      'Safety axis: 1 of 2 figures without data (quality_gates_passed)',
    ]);
    expect(d.evaluation_axes.technical.coverage).toBe('2/3');
    expect(d.cost).toEqual({ real_usd: 0.5, simulated_usd: 0.25 });
    expect(d.cache.hit_rate).toBe(0.25);
  });

  it('top performing patterns need 5 tasks, 0.9 success and 0.7 efficiency', () => {
    const d = buildDashboard(
      sums({
        byTaskModel: [
          { taskType: 'unit-tests', model: 'sim/haiku', tasks: 20, successes: 19, efficiencyScore: 18.4 },
          { taskType: 'unit-tests', model: 'sim/opus', tasks: 4, successes: 4, efficiencyScore: 4 },
          { taskType: 'review', model: 'sim/sonnet', tasks: 10, successes: 9, efficiencyScore: 6 },
        ],
      }),
      sums(),
      7,
    );
    expect(d.top_performing_patterns).toEqual(['sim/haiku for unit-tests (0.95 success, 0.92 efficiency)']);
  });
});

describe('tool insights', () => {
  const row = (tool: string, agent: string, calls: number, successes: number, extra: Partial<ToolAgentSums> = {}) => ({
    tool,
    agent,
    calls,
    successes,
    latencyMs: calls * 10,
    useful: successes,
    ...extra,
  });

  it('applies each rule at its threshold and not below the minimum number of calls', () => {
    const report = toolReport({
      byToolAgent: [
        row('grep', 'general', 10, 7),
        row('grep', 'explore', 5, 5),
        row('slow', 'a', 5, 5, { latencyMs: 5 * 2000 }),
        row('useless', 'a', 10, 9, { useful: 5 }),
        row('rare', 'a', 4, 0),
      ],
      pairs: [
        { tool: 'grep', next: 'read', count: 3 },
        { tool: 'grep', next: 'slow', count: 1 },
      ],
      efficiency: [{ tool: 'grep', workflows: 4, efficiencyScore: 3 }],
    });
    expect(report.insights).toEqual([
      'explore agent 100% success with grep - use more for grep calls',
      'slow averages 2000 ms per call - narrow its inputs',
      'useless succeeds but only 50% of its results feed a completed node - review what it returns',
    ]);
    expect(report.by_tool.grep).toMatchObject({
      calls: 15,
      success_rate: 0.8,
      avg_efficiency: 0.75,
      common_patterns: ['grep → read'],
    });
    // No workflow of a tool's calls has ended yet: no efficiency to average.
    expect(report.by_tool.slow?.avg_efficiency).toBeNull();
    const failing = toolReport({
      byToolAgent: [row('grep', 'a', 10, 4), row('grep', 'b', 10, 9)],
      pairs: [],
      efficiency: [],
    });
    expect(failing.insights).toEqual([
      'grep fails 35% of calls - check its input schema and description',
      'grep success drops to 0.40 for agent a - simplify its calls',
    ]);
  });

  it('percentiles by nearest rank', () => {
    expect(percentile([], 0.5)).toBeNull();
    const each = (...ms: number[]) => ms.map((value) => ({ ms: value, calls: 1 }));
    expect(percentile(each(1, 2, 3, 4), 0.5)).toBe(2);
    expect(percentile(each(1, 2, 3, 4), 0.95)).toBe(4);
    // Counted values (a roll-up's histogram buckets) rank like the values repeated.
    expect(
      percentile(
        [
          { ms: 1, calls: 2 },
          { ms: 3, calls: 2 },
        ],
        0.5,
      ),
    ).toBe(1);
    expect(
      percentile(
        [
          { ms: 1, calls: 2 },
          { ms: 3, calls: 3 },
        ],
        0.5,
      ),
    ).toBe(3);
  });
});

describe('model analytics', () => {
  const sums = (model: string, simulated: boolean, extra: Partial<ModelSums> = {}): ModelSums => ({
    model,
    simulated,
    calls: 4,
    tokensIn: 100,
    tokensOut: 50,
    costUsd: 0.123456789,
    tasks: 4,
    successfulTasks: 3,
    aggregateReward: { sum: 2, count: 3 },
    endedCalls: 4,
    failedCalls: 1,
    durations: [
      { ms: 10, calls: 2 },
      { ms: 30, calls: 1 },
      { ms: 90, calls: 1 },
    ],
    ...extra,
  });

  it('keeps real and simulated money apart, per model and in the totals', () => {
    const report = modelReport([sums('claude-haiku', false), sums('sim/haiku', true, { costUsd: 0.5 })]);
    expect(report.models[0]).toStrictEqual({
      model: 'claude-haiku',
      simulated: false,
      calls: 4,
      tokens_in: 100,
      tokens_out: 50,
      cost_usd: 0.12345679,
      simulated_cost_usd: 0,
      latency_ms: { p50: 10, p95: 90 },
      call_success_rate: 0.75,
      tasks: 4,
      success_rate: 0.75,
      mean_aggregate_reward: 0.6667,
      cost_per_successful_task_usd: 0.04115226,
      simulated_cost_per_successful_task_usd: null,
    });
    expect(report.models[1]).toMatchObject({
      cost_usd: 0,
      simulated_cost_usd: 0.5,
      cost_per_successful_task_usd: null,
      simulated_cost_per_successful_task_usd: 0.16666667,
    });
    expect(report.totals).toStrictEqual({ cost_usd: 0.12345679, simulated_cost_usd: 0.5 });
  });

  it('a figure with nothing to divide by is null, not 0', () => {
    const [idle] = modelReport([
      sums('claude-haiku', false, {
        successfulTasks: 0,
        endedCalls: 0,
        failedCalls: 0,
        aggregateReward: { sum: 0, count: 0 },
        durations: [],
      }),
    ]).models;
    expect(idle).toMatchObject({
      success_rate: 0,
      call_success_rate: null,
      mean_aggregate_reward: null,
      cost_per_successful_task_usd: null,
      latency_ms: { p50: null, p95: null },
    });
    expect(modelReport([]).totals).toStrictEqual({ cost_usd: 0, simulated_cost_usd: 0 });
  });
});
