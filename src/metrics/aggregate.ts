import type { EfficiencyRecord, EfficiencySums, RewardRecord, RewardSums } from '../domain/metrics.js';
import { recordCostUsd } from '../domain/metrics.js';
import { round } from './run-facts.js';

/**
 * Running averages (the seed's `efficiency/aggregate.json`: "running averages by task type") and
 * reward averages. Both are computed from sums — over a whole filtered window by the store, or
 * over a set of records here — so the formulas live once.
 */

export interface EfficiencyAverages {
  count: number;
  avg_efficiency_score: number | null;
  avg_wall_time_seconds: number | null;
  /** Share of records with outcome `success`. */
  success_rate: number | null;
  avg_retry_count: number | null;
  /** Σ by_model cost_usd of real providers per record, averaged: money. */
  avg_cost_usd: number | null;
  /** The same for sim/* models: what they would have cost at their tier price, not money. */
  avg_simulated_cost_usd: number | null;
}

export interface EfficiencyAggregate {
  by_task_type: Record<string, EfficiencyAverages>;
  overall: EfficiencyAverages;
}

export interface RewardAverages {
  count: number;
  outcome: number | null;
  efficiency: number | null;
  /** Over the records that have a preference (feedback); null when none has. */
  preference: number | null;
  aggregate: number | null;
}

const mean = (sum: number, count: number, digits = 4): number | null =>
  count === 0 ? null : round(sum / count, digits);

const NO_SUMS: EfficiencySums = {
  count: 0,
  efficiency_score: 0,
  wall_time_seconds: 0,
  successes: 0,
  retry_count: 0,
  cost_usd: 0,
  simulated_cost_usd: 0,
};

function averages(s: EfficiencySums): EfficiencyAverages {
  return {
    count: s.count,
    avg_efficiency_score: mean(s.efficiency_score, s.count),
    avg_wall_time_seconds: mean(s.wall_time_seconds, s.count, 3),
    success_rate: mean(s.successes, s.count),
    avg_retry_count: mean(s.retry_count, s.count),
    avg_cost_usd: mean(s.cost_usd, s.count, 8),
    avg_simulated_cost_usd: mean(s.simulated_cost_usd, s.count, 8),
  };
}

function add(a: EfficiencySums, b: EfficiencySums): EfficiencySums {
  const total = { ...a };
  for (const key of Object.keys(total) as Array<keyof EfficiencySums>) total[key] += b[key];
  return total;
}

/** The averages by task type and overall, from sums by task type. */
export function efficiencyAggregate(byTaskType: Readonly<Record<string, EfficiencySums>>): EfficiencyAggregate {
  const by_task_type: Record<string, EfficiencyAverages> = {};
  let overall = NO_SUMS;
  for (const type of Object.keys(byTaskType).sort()) {
    const sums = byTaskType[type] as EfficiencySums;
    by_task_type[type] = averages(sums);
    overall = add(overall, sums);
  }
  return { by_task_type, overall: averages(overall) };
}

/** Sums by task type of a set of records (what the store computes over a window in SQL). */
export function efficiencySumsOf(records: readonly EfficiencyRecord[]): Record<string, EfficiencySums> {
  const byType: Record<string, EfficiencySums> = {};
  for (const record of records) {
    const cost = recordCostUsd(record);
    const one: EfficiencySums = {
      count: 1,
      efficiency_score: record.efficiency_score,
      wall_time_seconds: record.metrics.wall_time_seconds,
      successes: record.outcome === 'success' ? 1 : 0,
      retry_count: record.metrics.retry_count,
      cost_usd: cost.real,
      simulated_cost_usd: cost.simulated,
    };
    byType[record.task_type] = add(byType[record.task_type] ?? NO_SUMS, one);
  }
  return byType;
}

export function aggregateEfficiency(records: readonly EfficiencyRecord[]): EfficiencyAggregate {
  return efficiencyAggregate(efficiencySumsOf(records));
}

export function rewardAverages(s: RewardSums): RewardAverages {
  return {
    count: s.count,
    outcome: mean(s.outcome, s.count),
    efficiency: mean(s.efficiency, s.count),
    preference: mean(s.preference, s.with_preference),
    aggregate: mean(s.aggregate, s.count),
  };
}

export function aggregateRewards(records: readonly RewardRecord[]): RewardAverages {
  const sums: RewardSums = { count: 0, outcome: 0, efficiency: 0, aggregate: 0, preference: 0, with_preference: 0 };
  for (const r of records) {
    sums.count += 1;
    sums.outcome += r.outcome_reward;
    sums.efficiency += r.efficiency_reward;
    sums.aggregate += r.aggregate_reward;
    if (r.preference_reward !== null) {
      sums.preference += r.preference_reward;
      sums.with_preference += 1;
    }
  }
  return rewardAverages(sums);
}
