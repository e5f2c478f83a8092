import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import { ErrorInfoSchema } from '../../domain/errors.js';
import { redactSecrets, redactValue } from '../../domain/redact.js';
import {
  REFLECTION_DECISIONS,
  REFLECTION_LEVELS,
  type ReflectionEntry,
  type ReflectionResolution,
} from '../../domain/reflection.js';
import { ownedWorkflow } from '../http/owned-workflow.js';
import { errorResponses, IdParamsSchema } from '../http/schemas.js';

/** The ports these routes use (route plugins get only what they need). */
type ReflectionRouteDeps = Pick<Deps, 'store'>;

/**
 * The reflection history of a workflow (docs/design.md#three-levels-of-reflection,
 * docs/design.md#http-api-conventions).
 */

const ReflectionEntryViewSchema = z
  .object({
    id: z.string().describe('rf_…, time-ordered.'),
    workflowId: z.string(),
    nodeId: z.string(),
    nodeName: z.string(),
    attempt: z.int().describe('The attempt that failed and was reflected on (1-based).'),
    timestamp: z.iso.datetime(),
    level: z.enum(REFLECTION_LEVELS),
    reason: z.string().describe("The model's reason, or why the fallback rule decided."),
    error: ErrorInfoSchema.describe('The failure reflected on.'),
    resolution: z.object({
      decision: z.enum(REFLECTION_DECISIONS),
      revisedPromptData: z.boolean().optional().describe('true when the retry ran with revised prompt data.'),
      revisedSystemPrompt: z.boolean().optional().describe('true when the retry ran with a revised system prompt.'),
      revisions: z
        .object({
          promptData: z.record(z.string(), z.unknown()).optional(),
          systemPrompt: z.string().optional(),
        })
        .optional()
        .describe('The revisions the retry applied (secrets redacted).'),
    }),
    success: z.boolean().nullable().describe('Whether the attempt that followed succeeded; null until it finished.'),
  })
  .describe('ReflectionEntry');
type ReflectionEntryView = z.infer<typeof ReflectionEntryViewSchema>;

const ReflectionListSchema = z.object({ items: z.array(ReflectionEntryViewSchema) });

/** Model-written text and revised prompt data can echo secrets from the input: redacted on the way out. */
function redactResolution(resolution: ReflectionResolution): ReflectionEntryView['resolution'] {
  if (resolution.revisions === undefined) return resolution;
  const { promptData, systemPrompt } = resolution.revisions;
  const revisions: NonNullable<ReflectionResolution['revisions']> = {};
  if (promptData !== undefined) revisions.promptData = redactValue(promptData) as Record<string, unknown>;
  if (systemPrompt !== undefined) revisions.systemPrompt = redactSecrets(systemPrompt);
  return { ...resolution, revisions };
}

export function toReflectionView(entry: ReflectionEntry): ReflectionEntryView {
  return {
    id: entry.id,
    workflowId: entry.workflowId,
    nodeId: entry.nodeId,
    nodeName: entry.nodeName,
    attempt: entry.attempt,
    timestamp: new Date(entry.timestamp).toISOString(),
    level: entry.level,
    reason: redactSecrets(entry.reason),
    error: entry.error,
    resolution: redactResolution(entry.resolution),
    success: entry.success,
  };
}

export async function reflectionRoutes(app: FastifyInstance, opts: { deps: ReflectionRouteDeps }): Promise<void> {
  const { deps } = opts;
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.get(
    '/v1/workflows/:id/reflections',
    {
      schema: {
        operationId: 'listWorkflowReflections',
        tags: ['workflows'],
        summary: 'Reflection history of a workflow, oldest first',
        description:
          'One entry per reflection (prompt, agent or workflow level): the failure, the decision, the revisions ' +
          'applied, and whether the attempt that followed succeeded.',
        params: IdParamsSchema,
        response: { 200: ReflectionListSchema, ...errorResponses(400, 401, 404, 429, 500) },
        responseDescriptions: { 200: 'The reflection entries, oldest first.' },
      },
    },
    async (request) => {
      const { id } = request.params;
      await ownedWorkflow(deps.store, request.tenantId, id);
      const entries = await deps.store.reflections(id);
      return { items: entries.map(toReflectionView) };
    },
  );
}
