import { AUTO_MIN_RUNS, AUTO_WINDOW_USES, type SelectionStrategy } from '../domain/agent-selection.js';
import type { StrategySums } from '../domain/agents.js';
import { strategyReport } from './selection.js';

/**
 * `strategy: "auto"` (docs/workflows.md#agent-selection; loki-mode's ADAPT step, "update selection
 * algorithms based on analytics"), per task type, from the figures GET /v1/analytics/selection
 * reports (strategyReport) over the newest AUTO_WINDOW_USES selecting uses of each strategy for the
 * task type. Pure and deterministic: the figures come in through the registry port, and the rule
 * draws nothing (the strategy it resolves to keeps its own random source).
 *
 * The rule:
 * 1. greedy or thompson with fewer than AUTO_MIN_RUNS rewarded runs → `insufficient_history`: the
 *    one with fewer rewarded runs (a tie → thompson), so the task type's candidates are tried and
 *    both reward strategies have figures to compare in the analytics;
 * 2. else → `cost_aware` (`enough_history`): the reward figures carry no cost, so comparing them
 *    cannot find the cheaper agent that is good enough (docs/workflows.md#cost-aware-selection).
 */

export type AutoReason = 'insufficient_history' | 'enough_history';

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
  const rewarded = (strategy: SelectionStrategy) => figures.find((f) => f.strategy === strategy)?.rewardedRuns ?? 0;
  const decide = (strategy: SelectionStrategy, reason: AutoReason): AutoDecision => ({
    strategy,
    reason,
    minRuns,
    windowUses: AUTO_WINDOW_USES,
    figures,
  });
  const greedy = rewarded('greedy');
  const thompson = rewarded('thompson');
  if (greedy < minRuns || thompson < minRuns) {
    return decide(greedy < thompson ? 'greedy' : 'thompson', 'insufficient_history');
  }
  return decide('cost_aware', 'enough_history');
}
