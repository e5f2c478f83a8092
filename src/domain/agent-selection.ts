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
export const SELECTION_STRATEGIES = ['greedy', 'thompson'] as const;
export type SelectionStrategy = (typeof SELECTION_STRATEGIES)[number];
/** What a prompt may ask for: a strategy, or `auto` (one of them, chosen per task type: metrics/auto-strategy.ts). */
export const REQUESTABLE_STRATEGIES = [...SELECTION_STRATEGIES, 'auto'] as const;
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
          '`auto`: greedy or thompson, whichever has the higher mean aggregate reward on this task type once both have ' +
          `${AUTO_MIN_RUNS} rewarded runs (before that, the one with fewer runs; docs/workflows.md#agent-selection).`,
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
  score: z.number().describe('What the strategy ranked by: the mean (0.5 without history) or the Thompson sample.'),
});

/** Why `strategy: "auto"` resolved as it did (metrics/auto-strategy.ts), with the figures it compared. */
export const AutoStrategySchema = z.strictObject({
  reason: z
    .enum(['insufficient_history', 'higher_mean_reward', 'higher_success_rate', 'tie'])
    .describe('Which step of the rule decided (docs/workflows.md#agent-selection).'),
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
