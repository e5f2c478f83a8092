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

describe('the whole dashboard of a window against the one before', () => {
  it('summary, pillars, trends, cost, cache and the four axes', () => {
    const current = sums({
      recoveryRate: sc(3, 4),
      qualityGates: sc(1, 2),
      rewards: { count: 10, outcome: 5, preference: sc(1.5, 2) },
      costUsd: 0.123456789,
      cache: { hits: 10, tokensSaved: 100, costSavedUsd: 0.000000014, simulatedCostSavedUsd: 0.5 },
    });
    const previous = sums({ tasks: 8, successes: 4, efficiencyScore: 4, agentsSpawned: 24, recoveryRate: sc(1, 2) });
    const cost = { real_usd: 0.12345679, simulated_usd: 0.25 };
    expect(buildDashboard(current, previous, 14)).toStrictEqual({
      period: 'rolling_14_days',
      summary: {
        tasks_completed: 10,
        success_rate: 0.9,
        avg_efficiency_score: 0.8,
        avg_outcome_reward: 0.5,
        avg_preference_reward: 0.75,
        avg_recovery_rate: 0.75,
        avg_goal_adherence: 0.9,
        avg_agents_per_task: 2,
      },
      previous_summary: {
        tasks_completed: 8,
        success_rate: 0.5,
        avg_efficiency_score: 0.5,
        avg_outcome_reward: 0.5,
        avg_preference_reward: null,
        avg_recovery_rate: 0.5,
        avg_goal_adherence: 0.9,
        avg_agents_per_task: 3,
      },
      quality_pillars: {
        tool_selection_accuracy: 1,
        tool_reliability_rate: 0.9,
        memory_retrieval_relevance: 0.8,
        policy_adherence: 0.95,
      },
      trends: {
        efficiency: '+60% vs previous 2 weeks',
        success_rate: '+80% vs previous 2 weeks',
        avg_agents_per_task: '-1.0 (improving)',
        recovery_rate: '+50% vs previous 2 weeks',
      },
      trend_figures: {
        efficiency: { current: 0.8, previous: 0.5, change: 0.6, kind: 'relative' },
        success_rate: { current: 0.9, previous: 0.5, change: 0.8, kind: 'relative' },
        avg_agents_per_task: { current: 2, previous: 3, change: -1, kind: 'absolute' },
        recovery_rate: { current: 0.75, previous: 0.5, change: 0.5, kind: 'relative' },
      },
      top_performing_patterns: [],
      // Reliability at 0.90 and policy adherence at 0.95 meet their targets.
      areas_for_improvement: ['Memory retrieval relevance below 0.85 target (0.80)'],
      cost,
      previous_cost: { real_usd: 0.5, simulated_usd: 0.25 },
      cache: {
        hits: 10,
        hit_rate: 0.25,
        tokens_saved: 100,
        cost_saved_usd: 0.00000001,
        simulated_cost_saved_usd: 0.5,
      },
      evaluation_axes: {
        technical: {
          label: 'Technical',
          figures: { success_rate: 0.9, efficiency_score: 0.8, recovery_rate: 0.75 },
          covered: 3,
          total: 3,
          coverage: '3/3',
        },
        human_centered: {
          label: 'Human-centered',
          figures: { preference_reward: 0.75, goal_adherence: 0.9 },
          covered: 2,
          total: 2,
          coverage: '2/2',
        },
        safety: {
          label: 'Safety',
          figures: { policy_adherence: 0.95, quality_gates_passed: 0.5 },
          covered: 2,
          total: 2,
          coverage: '2/2',
        },
        economic: {
          label: 'Economic',
          figures: { model_usage: 30, agents_spawned: 2, wall_time: 10, cost },
          covered: 4,
          total: 4,
          coverage: '4/4',
        },
      },
    });
  });

  it('a window without tasks: no figures, no cost, no trend; a previous 0 gives no relative change', () => {
    const empty = sums({
      tasks: 0,
      successes: 0,
      efficiencyScore: 0,
      agentsSpawned: 0,
      totalAgentCalls: 0,
      wallTimeSeconds: 0,
      goalAdherence: sc(0, 0),
      toolSelection: sc(0, 0),
      toolCalls: sc(0, 0),
      retrievalRelevance: sc(0, 0),
      guardrails: sc(0, 0),
      rewards: { count: 0, outcome: 0, preference: sc(0, 0) },
      cache: { hits: 0, tokensSaved: 0, costSavedUsd: 0, simulatedCostSavedUsd: 0 },
    });
    const d = buildDashboard(empty, sums({ efficiencyScore: 0 }), 21);
    expect(d.evaluation_axes.economic).toStrictEqual({
      label: 'Economic',
      figures: { model_usage: null, agents_spawned: null, wall_time: null, cost: null },
      covered: 0,
      total: 4,
      coverage: '0/4',
    });
    expect(d.cache.hit_rate).toBeNull();
    expect(d.trends.efficiency).toBe('no data in this window');
    const zeroBefore = buildDashboard(sums(), sums({ efficiencyScore: 0, recoveryRate: sc(1, 2) }), 21);
    expect(zeroBefore.trend_figures.efficiency.change).toBeNull();
    expect(zeroBefore.trends.efficiency).toBe('n/a (no data in the previous 3 weeks)');
    expect(zeroBefore.trends.success_rate).toBe('0% vs previous 3 weeks');
    expect(zeroBefore.trends.avg_agents_per_task).toBe('0.0 (unchanged)');
  });

  it('names each quality pillar below its target', () => {
    const d = buildDashboard(
      sums({ toolSelection: sc(8, 10), toolCalls: sc(8, 10), retrievalRelevance: sc(8, 10), guardrails: sc(9, 10) }),
      sums(),
      7,
    );
    expect(d.areas_for_improvement.slice(0, 4)).toEqual([
      'Tool selection accuracy below 0.90 target (0.80)',
      'Tool reliability below 0.90 target (0.80)',
      'Memory retrieval relevance below 0.85 target (0.80)',
      'Policy adherence below 0.95 target (0.90)',
    ]);
  });

  it('a task type needs 5 tasks and a known complexity; targets met exactly are no area', () => {
    const group = (taskType: string, complexity: string, tasks: number, successes: number, efficiency: number) => ({
      taskType,
      complexity,
      tasks,
      successes,
      efficiencyScore: efficiency,
      wallTimeSeconds: 1_000_000,
    });
    const d = buildDashboard(
      sums({
        toolCalls: sc(10, 10),
        retrievalRelevance: sc(10, 10),
        recoveryRate: sc(1, 1),
        qualityGates: sc(1, 1),
        rewards: { count: 10, outcome: 5, preference: sc(1, 1) },
        byTaskComplexity: [group('odd', 'unheard-of', 5, 4, 3), group('few', 'complex', 4, 0, 0)],
      }),
      sums(),
      7,
    );
    // odd: 0.80 success and 0.60 efficiency meet the targets; few: under 5 tasks, however slow.
    expect(d.areas_for_improvement).toEqual([]);
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

  it('reports a tool whole: its agents, its three most frequent next tools, and no efficiency without records', () => {
    const report = toolReport({
      byToolAgent: [
        row('grep', 'a', 6, 6, { latencyMs: 600, useful: 3 }),
        row('grep', 'b', 4, 2, { latencyMs: 400, useful: 2 }),
        row('solo', 'x', 5, 5),
        // Quality at exactly 0.70 meets its target.
        row('fair', 'x', 10, 9, { useful: 7 }),
      ],
      pairs: [
        { tool: 'grep', next: 'read', count: 3 },
        { tool: 'grep', next: 'zeta', count: 2 },
        { tool: 'grep', next: 'apply', count: 3 },
        { tool: 'grep', next: 'alpha', count: 5 },
        { tool: 'grep', next: 'once', count: 1 },
        { tool: 'solo', next: 'grep', count: 2 },
      ],
      efficiency: [{ tool: 'grep', workflows: 0, efficiencyScore: 0 }],
    });
    expect(report.by_tool.grep).toStrictEqual({
      calls: 10,
      success_rate: 0.8,
      avg_efficiency: null,
      avg_latency_ms: 100,
      avg_result_quality: 0.5,
      common_patterns: ['grep → alpha', 'grep → apply', 'grep → read'],
      by_agent: { a: { calls: 6, success: 1 }, b: { calls: 4, success: 0.5 } },
    });
    expect(report.by_tool.solo?.common_patterns).toEqual(['solo → grep']);
    // 0.80 success is not low, so quality is judged; b has too few calls to be judged; a lone agent
    // at 100% is no advice.
    expect(report.insights).toEqual([
      'grep succeeds but only 50% of its results feed a completed node - review what it returns',
      'a agent 100% success with grep - use more for grep calls',
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
