import { describe, expect, it } from 'vitest';
import type { EfficiencyRecord, RewardRecord } from '../../../src/domain/metrics.js';
import { aggregateEfficiency, aggregateRewards } from '../../../src/metrics/aggregate.js';
import { summarizeRun } from '../../../src/metrics/efficiency.js';
import { p, RunBuilder } from './fixtures.js';

function record(type: string, fields: { score: number; seconds: number; retries: number; cost: number; ok: boolean }) {
  const base = summarizeRun(new RunBuilder(p('a'), { task: { type } }).input());
  const r: EfficiencyRecord = {
    ...base,
    efficiency_score: fields.score,
    outcome: fields.ok ? 'success' : 'failure',
    outcome_reason: fields.ok ? 'spec_validated' : 'error_unrecoverable',
    metrics: {
      ...base.metrics,
      wall_time_seconds: fields.seconds,
      retry_count: fields.retries,
      by_model: {
        'anthropic/claude-haiku-5-5': { calls: 1, tokens_in: 1, tokens_out: 1, cost_usd: fields.cost / 2 },
        'anthropic/claude-opus-5-5': { calls: 1, tokens_in: 1, tokens_out: 1, cost_usd: fields.cost / 2 },
        'sim/opus': { calls: 1, tokens_in: 1, tokens_out: 1, cost_usd: 0.5, simulated: true },
      },
    },
  };
  return r;
}

describe('aggregateEfficiency (running averages by task type)', () => {
  it('averages per task type and overall', () => {
    const records = [
      record('review', { score: 1, seconds: 60, retries: 0, cost: 0.02, ok: true }),
      record('review', { score: 0.5, seconds: 120, retries: 2, cost: 0.04, ok: false }),
      record('fix', { score: 0.9, seconds: 30, retries: 1, cost: 0.01, ok: true }),
    ];
    const aggregate = aggregateEfficiency(records);
    expect(Object.keys(aggregate.by_task_type)).toEqual(['fix', 'review']);
    expect(aggregate.by_task_type.review).toEqual({
      count: 2,
      avg_efficiency_score: 0.75,
      avg_wall_time_seconds: 90,
      success_rate: 0.5,
      avg_retry_count: 1,
      avg_cost_usd: 0.03,
      avg_simulated_cost_usd: 0.5,
    });
    expect(aggregate.overall).toEqual({
      count: 3,
      avg_efficiency_score: 0.8,
      avg_wall_time_seconds: 70,
      success_rate: 0.6667,
      avg_retry_count: 1,
      avg_cost_usd: 0.02333333,
      // What sim/* calls would have cost is never added to money.
      avg_simulated_cost_usd: 0.5,
    });
  });

  it('is empty, with null averages, for no records', () => {
    expect(aggregateEfficiency([])).toEqual({
      by_task_type: {},
      overall: {
        count: 0,
        avg_efficiency_score: null,
        avg_wall_time_seconds: null,
        success_rate: null,
        avg_retry_count: null,
        avg_cost_usd: null,
        avg_simulated_cost_usd: null,
      },
    });
  });
});

describe('aggregateRewards', () => {
  const reward = (o: number, e: number, pr: number | null, a: number): RewardRecord => ({
    workflow_id: 'wf',
    task_type: 't',
    complexity: 'simple',
    outcome_reward: o,
    efficiency_reward: e,
    preference_reward: pr,
    aggregate_reward: a,
    created_at: '2026-01-06T10:00:00.000Z',
    updated_at: '2026-01-06T10:00:00.000Z',
  });

  it('averages, preference over the records that have one', () => {
    expect(aggregateRewards([reward(1, 0.9, 0.8, 0.945), reward(-1, 0.4, null, -0.588235)])).toEqual({
      count: 2,
      outcome: 0,
      efficiency: 0.65,
      preference: 0.8,
      aggregate: 0.1784,
    });
    expect(aggregateRewards([])).toEqual({
      count: 0,
      outcome: null,
      efficiency: null,
      preference: null,
      aggregate: null,
    });
  });
});
