import { z } from 'zod';
import { COMPLEXITIES } from './task.js';

/**
 * Efficiency records, rewards and feedback (docs/design.md#events-spans-metrics-and-rewards; loki-mode's
 * tool-orchestration reference).
 * The JSON shapes keep the seed's snake_case names: they are the API and the stored form. The
 * vocabularies are closed: nothing outside them is ever written. The rules live in src/metrics/.
 */

export const OUTCOMES = ['success', 'partial', 'failure'] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** The seed's `outcome_reasons`, grouped by the outcome they belong to. */
export const OUTCOME_REASONS_BY_OUTCOME = {
  success: ['tests_passed_first_try', 'tests_passed_after_fix', 'review_approved', 'spec_validated'],
  partial: ['tests_partial_pass', 'review_concerns_minor', 'timeout_partial_work'],
  failure: ['tests_failed', 'review_blocked', 'dependency_missing', 'timeout_no_progress', 'error_unrecoverable'],
} as const;
export const OUTCOME_REASONS = [
  ...OUTCOME_REASONS_BY_OUTCOME.success,
  ...OUTCOME_REASONS_BY_OUTCOME.partial,
  ...OUTCOME_REASONS_BY_OUTCOME.failure,
] as const;
export type OutcomeReason = (typeof OUTCOME_REASONS)[number];

export const RETRY_REASONS = [
  'test_failure',
  'lint_error',
  'type_error',
  'review_rejection',
  'rate_limit',
  'timeout',
  'dependency_conflict',
] as const;
export type RetryReason = (typeof RETRY_REASONS)[number];

export const POSITIVE_EFFICIENCY_FACTORS = [
  'used_haiku_for_simple',
  'parallel_execution',
  'cached_result',
  'first_try_success',
  'spec_driven',
] as const;
export const NEGATIVE_EFFICIENCY_FACTORS = [
  'used_opus_for_simple',
  'sequential_when_parallel_possible',
  'multiple_retries',
  'missing_context',
  'unclear_requirements',
] as const;
export const EFFICIENCY_FACTORS = [...POSITIVE_EFFICIENCY_FACTORS, ...NEGATIVE_EFFICIENCY_FACTORS] as const;
export type EfficiencyFactor = (typeof EFFICIENCY_FACTORS)[number];

export const USAGE_TIERS = ['haiku', 'sonnet', 'opus', 'other'] as const;
export type UsageTier = (typeof USAGE_TIERS)[number];

const Count = z.int().min(0);
const Rate = z.number().min(0).max(1);

export const TierUsageSchema = z.object({ calls: Count, est_tokens: Count });
export const ModelUsageSchema = z.object({
  calls: Count.describe('Logical calls: a call and its transport retries are one.'),
  requests: Count.optional().describe('Requests sent, every attempt (absent in records written before it existed).'),
  tokens_in: Count,
  tokens_out: Count,
  cost_usd: z.number().min(0),
  simulated: z
    .literal(true)
    .optional()
    .describe('A sim/* model: cost_usd is what the call would have cost at its tier price, not money spent.'),
});
export type ModelUsage = z.infer<typeof ModelUsageSchema>;

export const EfficiencyMetricsSchema = z.object({
  wall_time_seconds: z.number().min(0),
  agents_spawned: Count.describe('Agent executions (prompt-node attempts) that sent at least one provider request.'),
  total_agent_calls: Count.describe(
    'Logical model calls made (reflection calls included): a call and its transport retries are one; cache hits and calls refused by a limit are none.',
  ),
  provider_requests: Count.optional().describe(
    'Requests sent to providers, every attempt: what options.limits.maxLlmCalls bounds.',
  ),
  retry_count: Count,
  retry_reasons: z.array(z.enum(RETRY_REASONS)).describe('Distinct reasons, in the order they first occurred.'),
  recovery_rate: Rate.nullable().describe('Successful retries / retries; null when there was no retry.'),
  model_usage: z.object({
    haiku: TierUsageSchema,
    sonnet: TierUsageSchema,
    opus: TierUsageSchema,
    other: TierUsageSchema,
  }),
  by_model: z.record(z.string(), ModelUsageSchema).describe('Keyed by `provider/model`.'),
  cache_hits: Count,
});

export const QualityPillarsSchema = z.object({
  tool_selection_correct: z.boolean().nullable(),
  tool_reliability_rate: Rate.nullable(),
  memory_retrieval_relevant: z.boolean().nullable(),
  goal_adherence: Rate.nullable(),
});

/** The figures of every descendant workflow together (children, their children…), not the workflow's own. */
export const SubtreeUsageSchema = z.object({
  workflows: Count.describe('Descendant workflows.'),
  agents_spawned: Count,
  total_agent_calls: Count,
  provider_requests: Count,
  tokens_in: Count,
  tokens_out: Count,
  cost_usd: z.number().min(0).describe('Money spent on real providers.'),
  simulated_cost_usd: z.number().min(0).describe('What sim/* calls would have cost at their tier price: not money.'),
});
export type SubtreeUsage = z.infer<typeof SubtreeUsageSchema>;

export const EfficiencyRecordSchema = z
  .object({
    task_id: z.string().describe('The workflow id.'),
    correlation_id: z.string().nullable(),
    task_type: z.string(),
    complexity: z.enum(COMPLEXITIES),
    started_at: z.iso.datetime(),
    completed_at: z.iso.datetime(),
    metrics: EfficiencyMetricsSchema,
    outcome: z.enum(OUTCOMES),
    outcome_reason: z.enum(OUTCOME_REASONS),
    efficiency_score: Rate,
    efficiency_factors: z.array(z.enum(EFFICIENCY_FACTORS)),
    quality_pillars: QualityPillarsSchema,
    subtree: SubtreeUsageSchema.nullable()
      .optional()
      .describe("The child workflows' figures rolled up (null without children); `metrics` are the workflow's own."),
  })
  .describe('EfficiencyRecord');
export type EfficiencyRecord = z.infer<typeof EfficiencyRecordSchema>;

export const RewardRecordSchema = z
  .object({
    workflow_id: z.string(),
    task_type: z.string(),
    complexity: z.enum(COMPLEXITIES),
    outcome_reward: z.number().min(-1).max(1),
    efficiency_reward: Rate,
    preference_reward: z.number().min(-1).max(1).nullable().describe('Mean of the feedback actions; null without.'),
    aggregate_reward: z.number(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .describe('RewardRecord');
export type RewardRecord = z.infer<typeof RewardRecordSchema>;

/** The seed's implicit-feedback actions and the preference signal each one carries. */
export const FEEDBACK_ACTIONS = {
  commit: 0.8,
  deploy: 1.0,
  no_edits: 0.6,
  revert: -1.0,
  manual_fix: -0.5,
  retry_different: -0.3,
} as const;
export type FeedbackAction = keyof typeof FEEDBACK_ACTIONS;
export const FEEDBACK_ACTION_NAMES = Object.keys(FEEDBACK_ACTIONS) as [FeedbackAction, ...FeedbackAction[]];
export const FeedbackActionSchema = z.enum(FEEDBACK_ACTION_NAMES);

export const FeedbackSchema = z.strictObject({
  actions: z.array(FeedbackActionSchema).min(1).max(20),
  note: z.string().max(2000).optional(),
});
export type Feedback = z.infer<typeof FeedbackSchema>;

/** A sim/* model's figures are what it would have cost; records written before the flag carry the id only. */
function isSimulatedUsage(modelId: string, usage: ModelUsage): boolean {
  return usage.simulated === true || modelId.startsWith('sim/');
}

/**
 * What a record's calls cost: real money and simulated money apart, never added together
 * (docs/design.md#providers-and-models).
 */
export function recordCostUsd(record: EfficiencyRecord): { real: number; simulated: number } {
  const cost = { real: 0, simulated: 0 };
  for (const [modelId, usage] of Object.entries(record.metrics.by_model)) {
    if (isSimulatedUsage(modelId, usage)) cost.simulated += usage.cost_usd;
    else cost.real += usage.cost_usd;
  }
  return cost;
}

/** Sums over a set of efficiency records (one task type, or all): averages divide them by `count`. */
export interface EfficiencySums {
  count: number;
  efficiency_score: number;
  wall_time_seconds: number;
  successes: number;
  retry_count: number;
  cost_usd: number;
  simulated_cost_usd: number;
}

/** Sums over a set of reward records; `preference` over the `with_preference` ones that have feedback. */
export interface RewardSums {
  count: number;
  outcome: number;
  efficiency: number;
  aggregate: number;
  preference: number;
  with_preference: number;
}
