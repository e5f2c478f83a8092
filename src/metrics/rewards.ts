import { type EfficiencyRecord, FEEDBACK_ACTIONS, type FeedbackAction, type RewardRecord } from '../domain/metrics.js';
import type { Status } from '../domain/status.js';

/**
 * Reward signals (docs/design.md#events-spans-metrics-and-rewards, the seed's ToolOrchestra pattern): outcome,
 * efficiency, preference,
 * and their weighted aggregate. Rewards are written only by the service, never by tools.
 */

export const REWARD_WEIGHTS = { outcome: 0.6, efficiency: 0.25, preference: 0.15 } as const;

/**
 * The seed's `calculate_outcome_reward`, read off the efficiency record:
 * - success ("completed"): tests passed and review passed → 1.0; tests passed only → 0.7;
 *   otherwise → 0.3. "Review passed" is outcome_reason `review_approved`; "tests passed" is
 *   `tests_passed_first_try` / `tests_passed_after_fix`. A review approves only a completed run, in
 *   which every required responseFormat check has passed, so `review_approved` scores 1.0;
 *   `spec_validated` (nothing was checked) scores 0.3.
 * - partial → 0.0; failure → −1.0.
 */
export function outcomeReward(record: Pick<EfficiencyRecord, 'outcome' | 'outcome_reason'>): number {
  if (record.outcome === 'partial') return 0;
  if (record.outcome === 'failure') return -1;
  switch (record.outcome_reason) {
    case 'review_approved':
      return 1;
    case 'tests_passed_first_try':
    case 'tests_passed_after_fix':
      return 0.7;
    default:
      return 0.3;
  }
}

/** Mean of the actions' values (`commit` 0.8 … `revert` −1.0); null when there is none. */
export function preferenceReward(actions: readonly FeedbackAction[]): number | null {
  if (actions.length === 0) return null;
  const sum = actions.reduce((total, action) => total + FEEDBACK_ACTIONS[action], 0);
  return sum / actions.length;
}

/** `0.6·o + 0.25·e + 0.15·p`, or `(0.6·o + 0.25·e) / 0.85` when there is no preference signal. */
export function aggregateReward(outcome: number, efficiency: number, preference: number | null): number {
  const base = REWARD_WEIGHTS.outcome * outcome + REWARD_WEIGHTS.efficiency * efficiency;
  if (preference === null) return base / (1 - REWARD_WEIGHTS.preference);
  return base + REWARD_WEIGHTS.preference * preference;
}

const round6 = (x: number): number => Math.round(x * 1e6) / 1e6;

/**
 * The reward record of a finished workflow, or `undefined` when it was cancelled (pass its status):
 * a cancel says nothing about the work, so it earns no reward. `created_at` is the run's completion
 * unless given (a recomputation keeps the first one); `updated_at` likewise.
 */
export function rewardFor(
  record: EfficiencyRecord,
  actions: readonly FeedbackAction[] = [],
  context: { workflowStatus?: Status; createdAt?: string; updatedAt?: string } = {},
): RewardRecord | undefined {
  if (context.workflowStatus === 'cancelled') return undefined;
  const outcome = outcomeReward(record);
  const efficiency = record.efficiency_score;
  const preference = preferenceReward(actions);
  return {
    workflow_id: record.task_id,
    task_type: record.task_type,
    complexity: record.complexity,
    outcome_reward: outcome,
    efficiency_reward: efficiency,
    preference_reward: preference === null ? null : round6(preference),
    aggregate_reward: round6(aggregateReward(outcome, efficiency, preference)),
    created_at: context.createdAt ?? record.completed_at,
    updated_at: context.updatedAt ?? record.completed_at,
  };
}

/** A reward after feedback: preference = mean of every action so far, aggregate re-weighted. */
export function withFeedback(
  current: RewardRecord,
  actions: readonly FeedbackAction[],
  updatedAt: string,
): RewardRecord {
  const preference = preferenceReward(actions);
  return {
    ...current,
    preference_reward: preference === null ? null : round6(preference),
    aggregate_reward: round6(aggregateReward(current.outcome_reward, current.efficiency_reward, preference)),
    updated_at: updatedAt,
  };
}
