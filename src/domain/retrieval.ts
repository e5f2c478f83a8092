import { z } from 'zod';
import { ModelSpecSchema } from './names.js';

/** A prompt's `retrieval` (docs/design.md#agent-tools): its corpus, mode, budgets and engagement guard. */

/** docs/design.md#agent-tools: an engagement guard refuses a `finalize` that comes too early, once per run. */
export const RetrievalGuardSchema = z.union([
  z.strictObject({
    minCalls: z.int().min(1).max(50).describe('Retrievals expected before a finalize is accepted.'),
  }),
  z.strictObject({
    auto: z
      .literal(true)
      .describe(
        'Guard only models whose engagement on this task type is more than 30% below the reference model; ' +
          'minCalls is then the reference mean, rounded.',
      ),
    reference: ModelSpecSchema.optional().describe(
      'The model engagement is measured against (provider/model); default: the most engaged model on this task type.',
    ),
  }),
]);

export const RetrievalSchema = z.strictObject({
  corpus: z.string().min(1).max(100).describe('Id or name of one of your corpora (POST /v1/corpora).'),
  mode: z
    .enum(['tools', 'json-actions'])
    .optional()
    .describe(
      '`tools`: native tool calling with the `retrieve` tool; `json-actions`: the retrieve/finalize JSON contract ' +
        'for models without tools. Default tools.',
    ),
  maxSteps: z.int().min(1).max(20).optional().describe('Model turns before a forced final answer; default 5.'),
  maxChunks: z.int().min(1).max(50).optional().describe('Chunks one retrieval returns at most; default 8.'),
  guard: RetrievalGuardSchema.optional(),
});
export type Retrieval = z.infer<typeof RetrievalSchema>;
