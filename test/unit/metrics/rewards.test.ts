import { describe, expect, it } from 'vitest';
import type { EfficiencyRecord, FeedbackAction, OutcomeReason } from '../../../src/domain/metrics.js';
import {
  aggregateReward,
  outcomeReward,
  preferenceReward,
  rewardFor,
  withFeedback,
} from '../../../src/metrics/rewards.js';

function record(fields: Partial<EfficiencyRecord> = {}): EfficiencyRecord {
  return {
    task_id: 'wf_1',
    correlation_id: null,
    task_type: 'code_review',
    complexity: 'moderate',
    started_at: '2026-01-06T10:00:00.000Z',
    completed_at: '2026-01-06T10:05:32.000Z',
    metrics: {
      wall_time_seconds: 332,
      agents_spawned: 3,
      total_agent_calls: 7,
      retry_count: 1,
      retry_reasons: ['test_failure'],
      recovery_rate: 1,
      model_usage: {
        haiku: { calls: 4, est_tokens: 12000 },
        sonnet: { calls: 2, est_tokens: 8000 },
        opus: { calls: 1, est_tokens: 6000 },
        other: { calls: 0, est_tokens: 0 },
      },
      by_model: {},
      cache_hits: 0,
    },
    outcome: 'success',
    outcome_reason: 'tests_passed_after_fix',
    efficiency_score: 0.9,
    efficiency_factors: [],
    quality_pillars: {
      tool_selection_correct: null,
      tool_reliability_rate: null,
      memory_retrieval_relevant: null,
      goal_adherence: 1,
    },
    ...fields,
  };
}

describe('outcomeReward', () => {
  it.each<[EfficiencyRecord['outcome'], OutcomeReason, number]>([
    ['success', 'review_approved', 1],
    ['success', 'tests_passed_first_try', 0.7],
    ['success', 'tests_passed_after_fix', 0.7],
    ['success', 'spec_validated', 0.3],
    ['partial', 'tests_partial_pass', 0],
    ['partial', 'review_concerns_minor', 0],
    ['partial', 'timeout_partial_work', 0],
    ['failure', 'tests_failed', -1],
    ['failure', 'review_blocked', -1],
    ['failure', 'dependency_missing', -1],
    ['failure', 'timeout_no_progress', -1],
    ['failure', 'error_unrecoverable', -1],
  ])('%s / %s → %d', (outcome, outcome_reason, expected) => {
    expect(outcomeReward({ outcome, outcome_reason })).toBe(expected);
  });
});

describe('preferenceReward', () => {
  it.each<[FeedbackAction[], number | null]>([
    [[], null],
    [['no_edits'], 0.6],
    [['commit', 'deploy'], 0.9],
    [['revert', 'manual_fix'], -0.75],
    [['commit', 'revert'], -0.1],
    [['retry_different', 'deploy', 'commit'], 0.5],
  ])('mean of %j → %s', (actions, expected) => {
    const value = preferenceReward(actions);
    if (expected === null) expect(value).toBeNull();
    else expect(value).toBeCloseTo(expected, 10);
  });
});

describe('aggregateReward: 0.6·o + 0.25·e + 0.15·p, or (0.6·o + 0.25·e)/0.85', () => {
  it.each<[number, number, number | null, number]>([
    [1, 0.9, 0.8, 0.945], // 0.6 + 0.225 + 0.12
    [1, 0.9, null, 0.825 / 0.85], // 0.970588…
    [0.7, 1, null, 0.67 / 0.85], // 0.788235…
    [0, 0.5, 0.6, 0.215], // 0 + 0.125 + 0.09
    [-1, 0.4, -1, -0.65], // −0.6 + 0.1 − 0.15
    [-1, 0, null, -0.6 / 0.85],
    [1, 1, 1, 1],
    [1, 1, null, 1], // (0.6 + 0.25) / 0.85
  ])('o=%d e=%d p=%s → %d', (o, e, p, expected) => {
    expect(aggregateReward(o, e, p)).toBeCloseTo(expected, 10);
  });
});

describe('rewardFor', () => {
  it('builds the reward record without feedback', () => {
    expect(rewardFor(record())).toEqual({
      workflow_id: 'wf_1',
      task_type: 'code_review',
      complexity: 'moderate',
      outcome_reward: 0.7,
      efficiency_reward: 0.9,
      preference_reward: null,
      aggregate_reward: 0.758824, // (0.42 + 0.225) / 0.85
      created_at: '2026-01-06T10:05:32.000Z',
      updated_at: '2026-01-06T10:05:32.000Z',
    });
  });

  it('with feedback actions', () => {
    const reward = rewardFor(record(), ['commit', 'deploy']);
    expect(reward?.preference_reward).toBe(0.9);
    expect(reward?.aggregate_reward).toBeCloseTo(0.42 + 0.225 + 0.135, 6);
  });

  it('gives a cancelled workflow no reward', () => {
    expect(
      rewardFor(record({ outcome: 'partial', outcome_reason: 'timeout_partial_work' }), [], {
        workflowStatus: 'cancelled',
      }),
    ).toBeUndefined();
    expect(rewardFor(record(), [], { workflowStatus: 'failed' })).toBeDefined();
  });

  it('withFeedback recomputes preference and aggregate, keeping created_at', () => {
    const base = rewardFor(record({ outcome: 'failure', outcome_reason: 'tests_failed', efficiency_score: 0.4 }))!;
    const next = withFeedback(base, ['revert'], '2026-01-07T00:00:00.000Z');
    expect(next).toEqual({
      ...base,
      preference_reward: -1,
      aggregate_reward: -0.65,
      updated_at: '2026-01-07T00:00:00.000Z',
    });
    // Feedback taken back to none: no preference, and the aggregate without it.
    expect(withFeedback(next, [], '2026-01-08T00:00:00.000Z')).toMatchObject({
      preference_reward: null,
      aggregate_reward: base.aggregate_reward,
    });
  });
});
