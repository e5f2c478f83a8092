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
  savedUsd: 0,
  savedSimulatedUsd: 0,
});

describe('strategy auto', () => {
  it('zero history: thompson, insufficient_history, every figure empty', () => {
    const d = decideAutoStrategy([]);
    expect(d).toMatchObject({ strategy: 'thompson', reason: 'insufficient_history', minRuns: 10 });
    expect(d.figures.map((f) => [f.strategy, f.runs, f.meanAggregateReward])).toEqual([
      ['greedy', 0, null],
      ['thompson', 0, null],
      ['cost_aware', 0, null],
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

  it('both reward strategies at the minimum: cost_aware, whatever their rewards', () => {
    for (const [g, t] of [
      [8, 10],
      [2, 10],
      [-10, -20],
    ] as const) {
      expect(decideAutoStrategy([sums('greedy', 10, g), sums('thompson', 20, t)])).toMatchObject({
        strategy: 'cost_aware',
        reason: 'enough_history',
      });
    }
    expect(decideAutoStrategy([sums('greedy', 10, 1), sums('thompson', 9, 1)]).reason).toBe('insufficient_history');
  });
});
