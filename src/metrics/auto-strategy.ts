import { AUTO_MIN_RUNS, AUTO_WINDOW_USES, type SelectionStrategy } from '../domain/agent-selection.js';
import type { StrategySums } from '../domain/agents.js';
import { strategyReport } from './selection.js';

/**
 * `strategy: "auto"` (docs/workflows.md#agent-selection; loki-mode's ADAPT step, "update selection
 * algorithms based on analytics"): greedy or thompson, per task type, from the figures
 * GET /v1/analytics/selection reports (strategyReport) over the newest AUTO_WINDOW_USES selecting
 * uses of each strategy for the task type. Pure and deterministic: the figures come in through
 * the registry port, and the rule draws nothing (the strategy it resolves to keeps its own random
 * source).
 *
 * The rule:
 * 1. Either strategy with fewer than AUTO_MIN_RUNS rewarded runs → `insufficient_history`: the
 *    strategy with fewer rewarded runs (a tie → thompson), so both reach the minimum and auto never
 *    settles on a strategy it has not compared.
 * 2. Else the higher mean aggregate reward (as reported, 4 decimals) → `higher_mean_reward`;
 * 3. equal means: the higher success rate → `higher_success_rate`;
 * 4. equal as well → thompson (`tie`: it keeps exploring).
 */

export type AutoReason = 'insufficient_history' | 'higher_mean_reward' | 'higher_success_rate' | 'tie';

export interface AutoFigures {
  strategy: SelectionStrategy;
  runs: number;
  rewardedRuns: number;
  meanAggregateReward: number | null;
  successRate: number | null;
}

export interface AutoDecision {
  strategy: SelectionStrategy;
  reason: AutoReason;
  minRuns: number;
  windowUses: number;
  figures: AutoFigures[];
}

export function decideAutoStrategy(sums: readonly StrategySums[], minRuns = AUTO_MIN_RUNS): AutoDecision {
  const figures = strategyReport(sums).map(
    (f): AutoFigures => ({
      strategy: f.strategy,
      runs: f.runs,
      rewardedRuns: sums.find((s) => s.strategy === f.strategy)?.rewarded ?? 0,
      meanAggregateReward: f.mean_aggregate_reward,
      successRate: f.success_rate,
    }),
  );
  const greedy = figures.find((f) => f.strategy === 'greedy') as AutoFigures;
  const thompson = figures.find((f) => f.strategy === 'thompson') as AutoFigures;
  const decide = (strategy: SelectionStrategy, reason: AutoReason): AutoDecision => ({
    strategy,
    reason,
    minRuns,
    windowUses: AUTO_WINDOW_USES,
    figures,
  });
  if (greedy.rewardedRuns < minRuns || thompson.rewardedRuns < minRuns) {
    return decide(greedy.rewardedRuns < thompson.rewardedRuns ? 'greedy' : 'thompson', 'insufficient_history');
  }
  const byMean = compare(greedy.meanAggregateReward, thompson.meanAggregateReward);
  if (byMean !== 0) return decide(byMean > 0 ? 'greedy' : 'thompson', 'higher_mean_reward');
  const bySuccess = compare(greedy.successRate, thompson.successRate);
  if (bySuccess !== 0) return decide(bySuccess > 0 ? 'greedy' : 'thompson', 'higher_success_rate');
  return decide('thompson', 'tie');
}

/** Positive when a is higher; a missing figure ranks below any figure. */
function compare(a: number | null, b: number | null): number {
  return (a ?? Number.NEGATIVE_INFINITY) - (b ?? Number.NEGATIVE_INFINITY) || 0;
}
