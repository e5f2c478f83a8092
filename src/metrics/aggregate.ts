import type { EfficiencyRecord, RewardRecord } from '../domain/metrics.js';
import { round } from './run-facts.js';

/**
 * Running averages (the seed's `efficiency/aggregate.json`: "running averages by task type") over a
 * set of efficiency records, and the averages of a set of reward records.
 */

export interface EfficiencyAverages {
  count: number;
  avg_efficiency_score: number | null;
  avg_wall_time_seconds: number | null;
  /** Share of records with outcome `success`. */
  success_rate: number | null;
  avg_retry_count: number | null;
  /** Σ by_model cost_usd per record, averaged. */
  avg_cost_usd: number | null;
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

function mean(values: readonly number[], digits = 4): number | null {
  if (values.length === 0) return null;
  return round(values.reduce((a, b) => a + b, 0) / values.length, digits);
}

export function recordCostUsd(record: EfficiencyRecord): number {
  return Object.values(record.metrics.by_model).reduce((sum, m) => sum + m.cost_usd, 0);
}

function averages(records: readonly EfficiencyRecord[]): EfficiencyAverages {
  return {
    count: records.length,
    avg_efficiency_score: mean(records.map((r) => r.efficiency_score)),
    avg_wall_time_seconds: mean(
      records.map((r) => r.metrics.wall_time_seconds),
      3,
    ),
    success_rate: mean(records.map((r) => (r.outcome === 'success' ? 1 : 0))),
    avg_retry_count: mean(records.map((r) => r.metrics.retry_count)),
    avg_cost_usd: mean(records.map(recordCostUsd), 8),
  };
}

export function aggregateEfficiency(records: readonly EfficiencyRecord[]): EfficiencyAggregate {
  const groups = new Map<string, EfficiencyRecord[]>();
  for (const record of records) {
    const group = groups.get(record.task_type);
    if (group) group.push(record);
    else groups.set(record.task_type, [record]);
  }
  const by_task_type: Record<string, EfficiencyAverages> = {};
  for (const type of [...groups.keys()].sort()) by_task_type[type] = averages(groups.get(type) ?? []);
  return { by_task_type, overall: averages(records) };
}

export function aggregateRewards(records: readonly RewardRecord[]): RewardAverages {
  return {
    count: records.length,
    outcome: mean(records.map((r) => r.outcome_reward)),
    efficiency: mean(records.map((r) => r.efficiency_reward)),
    preference: mean(records.flatMap((r) => (r.preference_reward === null ? [] : [r.preference_reward]))),
    aggregate: mean(records.map((r) => r.aggregate_reward)),
  };
}
