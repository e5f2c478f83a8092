import { ValidationError } from '../domain/errors.js';
import {
  type EfficiencyRecord,
  EfficiencyRecordSchema,
  type FeedbackAction,
  FeedbackActionSchema,
  type RewardRecord,
  RewardRecordSchema,
} from '../domain/metrics.js';
import type { MetricsFilter } from '../domain/ports.js';

/**
 * The efficiency, rewards and feedback rows as both stores keep them (migrations/sqlite/0006,
 * migrations/postgres/0003) and read them back: one mapping, driver-free. Times are epoch ms in the
 * rows, ISO strings in the records.
 */

export interface EfficiencyRow {
  record: string;
  workflow_id: string;
  created_at: number;
}

export interface RewardRow {
  workflow_id: string;
  task_type: string;
  complexity: string;
  outcome_reward: number;
  efficiency_reward: number;
  preference_reward: number | null;
  aggregate_reward: number;
  created_at: number;
  updated_at: number;
}

export const REWARD_COLUMNS =
  'workflow_id, task_type, complexity, outcome_reward, efficiency_reward, preference_reward, aggregate_reward, created_at, updated_at';

export const ms = (iso: string): number => Date.parse(iso);

/** JSON and enum columns go back through zod: a corrupt row fails loudly, not downstream. */
export function toRecord(row: Pick<EfficiencyRow, 'record'>): EfficiencyRecord {
  return EfficiencyRecordSchema.parse(JSON.parse(row.record));
}

export function toReward(row: RewardRow): RewardRecord {
  return RewardRecordSchema.parse({
    ...row,
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  });
}

export function toActions(json: string): FeedbackAction[] {
  return FeedbackActionSchema.array().parse(JSON.parse(json));
}

export function checkLimit(limit: number): void {
  if (!Number.isInteger(limit) || limit < 1) {
    throw new ValidationError('Invalid limit', [{ path: 'limit', message: 'must be a positive integer' }]);
  }
}

/** A metrics filter's fields: the column each one bounds and how (both ends inclusive). */
export const METRICS_FILTERS = [
  ['from', 'created_at', '>='],
  ['to', 'created_at', '<='],
  ['taskType', 'task_type', '='],
  ['complexity', 'complexity', '='],
] as const;

/** Rewards are filtered by time only. */
export function rangeOf(filter: Pick<MetricsFilter, 'from' | 'to'>): MetricsFilter {
  const range: MetricsFilter = {};
  if (filter.from !== undefined) range.from = filter.from;
  if (filter.to !== undefined) range.to = filter.to;
  return range;
}
