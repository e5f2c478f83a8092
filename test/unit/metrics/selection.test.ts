import { describe, expect, it } from 'vitest';
import {
  sampleBeta,
  savingsReport,
  scoreCandidates,
  seededRandom,
  selectionSavingsTotal,
  strategyReport,
} from '../../../src/metrics/selection.js';

/** A strategy's report row with no selecting run in the window. */
const noRuns = (strategy: string) => ({
  strategy,
  runs: 0,
  mean_aggregate_reward: null,
  success_rate: null,
  cost_usd: 0,
  simulated_cost_usd: 0,
  cost_per_success_usd: null,
  simulated_cost_per_success_usd: null,
  saved_usd: 0,
  simulated_saved_usd: 0,
});

describe('selection policy', () => {
  it('greedy: the mean aggregate reward, 0.5 without history; ties go to the earlier candidate', () => {
    const history = new Map([
      ['a', { runs: 2, rewardSum: 1.2 }],
      ['b', { runs: 4, rewardSum: -2 }],
    ]);
    const { chosen, scores } = scoreCandidates(['b', 'c', 'a'], history, 'greedy', () => 0);
    expect(chosen).toBe('a');
    expect(scores).toEqual([
      { name: 'b', runs: 4, meanReward: -0.5, score: -0.5 },
      { name: 'c', runs: 0, meanReward: null, score: 0.5 },
      { name: 'a', runs: 2, meanReward: 0.6, score: 0.6 },
    ]);
    expect(scoreCandidates(['x', 'y'], new Map(), 'greedy', () => 0).chosen).toBe('x');
  });

  it('samples Beta(a, b) with the right mean', () => {
    const random = seededRandom(1);
    for (const [a, b] of [
      [1, 1],
      [2, 8],
      [30, 3],
    ] as const) {
      let sum = 0;
      for (let i = 0; i < 4000; i++) sum += sampleBeta(a, b, random);
      expect(sum / 4000).toBeCloseTo(a / (a + b), 1);
    }
  });

  it('reports every strategy, with nulls where nothing ran or succeeded', () => {
    const report = strategyReport([
      {
        strategy: 'thompson',
        runs: 4,
        rewarded: 4,
        rewardSum: 2,
        successes: 2,
        costUsd: 0.5,
        simulatedCostUsd: 1,
        savedUsd: 0.25,
        savedSimulatedUsd: 0,
      },
    ]);
    expect(report).toEqual([
      noRuns('greedy'),
      {
        strategy: 'thompson',
        runs: 4,
        mean_aggregate_reward: 0.5,
        success_rate: 0.5,
        cost_usd: 0.5,
        simulated_cost_usd: 1,
        cost_per_success_usd: 0.25,
        simulated_cost_per_success_usd: 0.5,
        saved_usd: 0.25,
        simulated_saved_usd: 0,
      },
      noRuns('cost_aware'),
    ]);
  });

  it('savings per task type and strategy, and every strategy’s summed, to the millionth of a dollar', () => {
    expect(
      savingsReport([
        { taskType: 'bugfix', strategy: 'cost_aware', runs: 5, counted: 4, savedUsd: 0.1234564, savedSimulatedUsd: 2 },
      ]),
    ).toStrictEqual([
      { task_type: 'bugfix', strategy: 'cost_aware', runs: 5, counted: 4, saved_usd: 0.123456, simulated_saved_usd: 2 },
    ]);
    const row = (savedUsd: number, savedSimulatedUsd: number) => ({
      strategy: 'cost_aware' as const,
      runs: 1,
      rewarded: 0,
      rewardSum: 0,
      successes: 0,
      costUsd: 0,
      simulatedCostUsd: 0,
      savedUsd,
      savedSimulatedUsd,
    });
    expect(selectionSavingsTotal([row(0.1000004, 1), row(0.2, 0.5)])).toStrictEqual({
      saved_usd: 0.3,
      simulated_saved_usd: 1.5,
    });
    expect(selectionSavingsTotal([])).toStrictEqual({ saved_usd: 0, simulated_saved_usd: 0 });
  });
});
