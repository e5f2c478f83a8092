import { z } from 'zod';
import { AGENT_ROLES, NameSchema } from './names.js';
import { COMPLEXITIES } from './task.js';

/**
 * Agent selection (docs/design.md#complexity-allocation-selection-and-review): a prompt's `select`, and what the
 * service settles it to at submission.
 */

/**
 * How agents are picked among candidates by past reward (docs/design.md#complexity-allocation-selection-and-review).
 */
export const SELECTION_STRATEGIES = ['greedy', 'thompson', 'cost_aware'] as const;
export type SelectionStrategy = (typeof SELECTION_STRATEGIES)[number];
/** What a prompt may ask for: a strategy, or `auto` (one of them, chosen per task type: metrics/auto-strategy.ts). */
export const REQUESTABLE_STRATEGIES = [...SELECTION_STRATEGIES, 'auto'] as const;
/** `cost_aware`: runs each candidate gets (the warm-up) before prices decide (docs/workflows.md#cost-aware-selection). */
export const COST_AWARE_MIN_RUNS = 3;
/**
 * `cost_aware` defaults (docs/workflows.md#cost-aware-selection): pay for a better candidate once the
 * record shows, at 90%, that the cheaper one succeeds more than 3 points less often.
 */
export const COST_AWARE_TOLERANCE = 0.03;
export const COST_AWARE_CONFIDENCE = 0.9;
export const ToleranceSchema = z.number().min(0).max(1);
export const ConfidenceSchema = z.number().min(0.5).max(0.999);
/** `auto`: rewarded runs each strategy needs, per task type, before they are compared. */
export const AUTO_MIN_RUNS = 10;
/** `auto`: newest selecting uses read per strategy and task type; bounds the per-selection lookup (migrations/sqlite/0024). */
export const AUTO_WINDOW_USES = 200;

export const AgentSelectionSchema = z.strictObject({
  select: z.strictObject({
    role: z.enum(AGENT_ROLES).describe('The role the chosen agent plays.'),
    candidates: z
      .array(NameSchema)
      .min(1)
      .max(50)
      .optional()
      .describe('Agent names (of this definition or registered); default: every registered agent of the role.'),
    strategy: z
      .enum(REQUESTABLE_STRATEGIES)
      .optional()
      .describe(
        '`greedy` (default): the highest mean aggregate reward on past runs of the same task type and complexity ' +
          '(0.5 without history); `thompson`: the highest sample from Beta(1 + Σr, 1 + Σ(1 − r)), rewards mapped to [0, 1]; ' +
          '`cost_aware`: the cheapest candidate not shown, with `confidence`, to succeed more than `tolerance` less often ' +
          'than the leader of a Thompson draw of success rates (docs/workflows.md#cost-aware-selection); ' +
          '`auto`: greedy and thompson in turn until each has ' +
          `${AUTO_MIN_RUNS} rewarded runs on this task type, then cost_aware (docs/workflows.md#agent-selection).`,
      ),
    tolerance: ToleranceSchema.optional().describe(
      `cost_aware: success-rate points (0.03 = 3) a cheaper candidate may trail the leader by; default the tenant's, else ${COST_AWARE_TOLERANCE}.`,
    ),
    confidence: ConfidenceSchema.optional().describe(
      `cost_aware: how sure the record must be that a cheaper candidate trails by more before it is passed over; default the tenant's, else ${COST_AWARE_CONFIDENCE}.`,
    ),
  }),
});
export type AgentSelection = z.infer<typeof AgentSelectionSchema>;

/** One candidate's score when a prompt's agent was selected. */
export const CandidateScoreSchema = z.strictObject({
  agent: NameSchema,
  version: z.int().min(1).nullable().describe('Registry version; null: an agent of the definition.'),
  runs: z.int().min(0).describe('Past rewarded runs of the same task type and complexity.'),
  meanReward: z.number().nullable().describe('Their mean aggregate reward; null without history.'),
  score: z
    .number()
    .describe(
      'What the strategy ranked by: the mean (0.5 without history) or the Thompson sample (cost_aware: of success).',
    ),
  successes: z.int().min(0).optional().describe('Those runs with outcome success (absent on older selections).'),
  expectedCostUsd: z.number().nullable().optional().describe('Mean real cost of those runs; null without history.'),
  expectedSimulatedCostUsd: z
    .number()
    .nullable()
    .optional()
    .describe('Mean simulated cost of those runs (not money); null without history.'),
  belowLeader: z
    .number()
    .nullable()
    .optional()
    .describe(
      "cost_aware: P(success < the leader's draw − tolerance) under Beta(1 + successes, 1 + failures); null: the leader.",
    ),
  eligible: z.boolean().optional().describe('cost_aware: not ruled out (the cheapest eligible candidate wins).'),
});

/** Why a cost_aware selection chose as it did (metrics/cost-aware.ts). */
export const CostAwareReportSchema = z.strictObject({
  tolerance: ToleranceSchema,
  confidence: ConfidenceSchema,
  minRuns: z.int().describe('Runs every candidate gets (the warm-up) before prices decide.'),
  leader: NameSchema.describe('The candidate with the highest draw of success.'),
  reason: z
    .enum(['warm_up', 'leader_cheapest', 'cheaper_within_tolerance'])
    .describe(
      'warm_up: a candidate had fewer than minRuns runs (the fewest, then the cheapest by list price, ran); ' +
        'leader_cheapest: no cheaper candidate was eligible; cheaper_within_tolerance: a cheaper candidate was.',
    ),
});

/**
 * The counterfactual of a selection (docs/workflows.md#counterfactual-savings), from the history it
 * scored by: the best-quality candidate's expected cost per run against the chosen one's.
 */
export const SelectionSavingsSchema = z.strictObject({
  reference: NameSchema.nullable().describe(
    `The highest observed success rate among candidates with ≥ ${COST_AWARE_MIN_RUNS} runs; null: none had that many.`,
  ),
  savedUsd: z
    .number()
    .nullable()
    .describe(
      "The reference's expected real cost per run − the chosen one's (0: the reference was chosen); null: unknown.",
    ),
  savedSimulatedUsd: z.number().nullable().describe('The same in simulated money (not money).'),
});

/** Why `strategy: "auto"` resolved as it did (metrics/auto-strategy.ts), with the figures it compared. */
export const AutoStrategySchema = z.strictObject({
  reason: z
    .enum(['insufficient_history', 'enough_history', 'higher_mean_reward', 'higher_success_rate', 'tie'])
    .describe(
      'Which step of the rule decided (docs/workflows.md#agent-selection); the last three are given only by ' +
        'selections made before cost_aware existed.',
    ),
  minRuns: z.int().describe('Rewarded runs each strategy needs on the task type before they are compared.'),
  windowUses: z.int().describe('Newest selecting uses per strategy and task type the figures cover.'),
  figures: z.array(
    z.strictObject({
      strategy: z.enum(SELECTION_STRATEGIES),
      runs: z.int(),
      rewardedRuns: z.int(),
      meanAggregateReward: z.number().nullable(),
      successRate: z.number().nullable(),
    }),
  ),
});

/** Written by the service at submission (a request that sends it is refused): what the prompt runs with. */
export const ResolvedAgentSchema = z.strictObject({
  version: z
    .int()
    .min(1)
    .optional()
    .describe('Registry version of the agent the prompt runs with (absent: a definition agent).'),
  selection: z
    .strictObject({
      role: z.enum(AGENT_ROLES),
      strategy: z.enum(SELECTION_STRATEGIES).describe('The strategy that scored (for `auto`: what it resolved to).'),
      auto: AutoStrategySchema.optional().describe('Present when the prompt asked for `strategy: "auto"`.'),
      costAware: CostAwareReportSchema.optional().describe('Present when the strategy was cost_aware.'),
      savings: SelectionSavingsSchema.optional().describe('Absent on selections made before savings were recorded.'),
      candidates: z.array(CandidateScoreSchema),
      taskType: z.string(),
      complexity: z.enum(COMPLEXITIES),
    })
    .optional()
    .describe("The selection that chose `agent`, with every candidate's score."),
  patterns: z
    .array(z.string())
    .optional()
    .describe(
      'A planning prompt: the top performing patterns of the task type at submission, shown to the model in a ' +
        '<successful_patterns> block (docs/analytics.md#successful-patterns).',
    ),
});
export type ResolvedAgent = z.infer<typeof ResolvedAgentSchema>;
