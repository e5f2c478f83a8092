import { describe, expect, it } from 'vitest';
import type { StrategySums } from '../../../src/domain/agents.js';
import { decideAutoStrategy } from '../../../src/metrics/auto-strategy.js';

const sums = (strategy: 'greedy' | 'thompson', rewarded: number, rewardSum: number, successes = 0): StrategySums => ({
  strategy,
  runs: rewarded,
  rewarded,
  rewardSum,
  successes,
  costUsd: 0,
  simulatedCostUsd: 0,
});

describe('strategy auto', () => {
  it('zero history: thompson, insufficient_history, every figure empty', () => {
    const d = decideAutoStrategy([]);
    expect(d).toMatchObject({ strategy: 'thompson', reason: 'insufficient_history', minRuns: 10 });
    expect(d.figures.map((f) => [f.strategy, f.runs, f.meanAggregateReward])).toEqual([
      ['greedy', 0, null],
      ['thompson', 0, null],
    ]);
  });

  it('history for only one strategy: the other one runs until both reach the minimum', () => {
    expect(decideAutoStrategy([sums('thompson', 40, 30)]).strategy).toBe('greedy');
    expect(decideAutoStrategy([sums('greedy', 40, 30)]).strategy).toBe('thompson');
    expect(decideAutoStrategy([sums('greedy', 9, 9), sums('thompson', 40, -30)])).toMatchObject({
      strategy: 'greedy',
      reason: 'insufficient_history',
    });
  });

  it('both above the minimum: higher mean, then success rate, then thompson', () => {
    expect(decideAutoStrategy([sums('greedy', 10, 8), sums('thompson', 20, 10)])).toMatchObject({
      strategy: 'greedy',
      reason: 'higher_mean_reward',
    });
    expect(decideAutoStrategy([sums('greedy', 10, 2), sums('thompson', 20, 10)]).strategy).toBe('thompson');
    expect(decideAutoStrategy([sums('greedy', 10, 5, 3), sums('thompson', 20, 10, 8)])).toMatchObject({
      strategy: 'thompson',
      reason: 'higher_success_rate',
    });
    expect(decideAutoStrategy([sums('greedy', 10, 5, 5), sums('thompson', 20, 10, 10)])).toMatchObject({
      strategy: 'thompson',
      reason: 'tie',
    });
  });
});
