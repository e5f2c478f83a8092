import { z } from 'zod';
import { ErrorInfoSchema } from './errors.js';

/**
 * Reflection (docs/design.md#three-levels-of-reflection): groundswell's three levels, the decision a reflection
 * reaches, the
 * advice a model returns, and the persisted history entry. The rules live in src/reflection/.
 */

export const REFLECTION_LEVELS = ['prompt', 'agent', 'workflow'] as const;
export const ReflectionLevelSchema = z.enum(REFLECTION_LEVELS);
export type ReflectionLevel = z.infer<typeof ReflectionLevelSchema>;

export const REFLECTION_DECISIONS = ['retry', 'skip', 'abort'] as const;
export const ReflectionDecisionSchema = z.enum(REFLECTION_DECISIONS);
export type ReflectionDecision = z.infer<typeof ReflectionDecisionSchema>;

/** What the node's agent answers to a workflow-level reflection request; groundswell's names. */
export const ReflectionAdviceSchema = z.object({
  shouldRetry: z.boolean(),
  reason: z.string().max(2000),
  revisedPromptData: z.record(z.string(), z.unknown()).optional(),
  revisedSystemPrompt: z.string().max(100000).optional(),
});
export type ReflectionAdvice = z.infer<typeof ReflectionAdviceSchema>;

/**
 * How a reflection was resolved.
 * - `decision`: retry (a new attempt follows), skip (an optional node is given up, the workflow
 *   goes on), abort (the node's failure stands).
 * - `revisedPromptData` / `revisedSystemPrompt`: present and `true` only when the retry really ran
 *   with that revision applied; absent otherwise (prompt- and agent-level reflections never revise).
 * - `revisions`: the applied revisions themselves, so a run resumed after a crash can re-apply them
 *   to the retry (the node's definition alone no longer describes what it runs), and so the history
 *   shows what changed.
 */
export const ReflectionResolutionSchema = z.object({
  decision: ReflectionDecisionSchema,
  revisedPromptData: z.boolean().optional(),
  revisedSystemPrompt: z.boolean().optional(),
  revisions: z
    .object({
      promptData: z.record(z.string(), z.unknown()).optional(),
      systemPrompt: z.string().optional(),
    })
    .optional(),
});
export type ReflectionResolution = z.infer<typeof ReflectionResolutionSchema>;

/**
 * One reflection, persisted with the node's results (docs/design.md#three-levels-of-reflection). Times are epoch
 * milliseconds.
 */
export const ReflectionEntrySchema = z.object({
  /** `rf_…`, time-ordered: sorting by id is creation order. */
  id: z.string(),
  workflowId: z.string(),
  tenantId: z.string(),
  nodeId: z.string(),
  nodeName: z.string(),
  /** The attempt that failed and was reflected on (1-based). */
  attempt: z.int().min(1),
  timestamp: z.int(),
  level: ReflectionLevelSchema,
  /** The model's reason, or why the fallback heuristic decided. */
  reason: z.string(),
  /** The failure reflected on. */
  error: ErrorInfoSchema,
  resolution: ReflectionResolutionSchema,
  /** Whether the attempt that followed succeeded; null until it finished (or when none followed). */
  success: z.boolean().nullable(),
});
export type ReflectionEntry = z.infer<typeof ReflectionEntrySchema>;

/**
 * A reflection asked for by hand on a failed prompt node (groundswell's `triggerReflection`): the
 * failed workflow is reopened, the node's agent reflects (with the person's note) and the node runs
 * once more. Times are epoch milliseconds.
 */
export interface ReflectionRequest {
  /** `rr_…`. */
  id: string;
  workflowId: string;
  nodeId: string;
  /** The person's note, passed to the reflection (redacted). */
  reason: string | null;
  requestedAt: number;
}
