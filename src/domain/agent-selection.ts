import { z } from 'zod';
import { AGENT_ROLES, NameSchema } from './names.js';
import { COMPLEXITIES } from './task.js';

/** Agent selection (DESIGN §8): a prompt's `select`, and what the service settles it to at submission. */

/** How agents are picked among candidates by past reward (DESIGN §8). */
export const SELECTION_STRATEGIES = ['greedy', 'thompson'] as const;
export type SelectionStrategy = (typeof SELECTION_STRATEGIES)[number];

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
      .enum(SELECTION_STRATEGIES)
      .optional()
      .describe(
        '`greedy` (default): the highest mean aggregate reward on past runs of the same task type and complexity ' +
          '(0.5 without history); `thompson`: the highest sample from Beta(1 + Σr, 1 + Σ(1 − r)), rewards mapped to [0, 1].',
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
      strategy: z.enum(SELECTION_STRATEGIES),
      candidates: z.array(CandidateScoreSchema),
      taskType: z.string(),
      complexity: z.enum(COMPLEXITIES),
    })
    .optional()
    .describe("The selection that chose `agent`, with every candidate's score."),
});
export type ResolvedAgent = z.infer<typeof ResolvedAgentSchema>;
