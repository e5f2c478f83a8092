import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ModelSpecSchema } from '../../domain/names.js';
import type { EngagementStore } from '../../domain/ports.js';
import { engagementReport } from '../../metrics/engagement.js';
import { errorResponses } from '../http/schemas.js';

/** Retrieval engagement per model (docs/design.md#agent-tools): how models use the tools they are given. */

const FiguresSchema = z.object({
  tasks: z.int().describe('Workflows (tasks) with at least one retrieval run: the seed counts engagement per task.'),
  mean_retrieval_calls_per_task: z.number().describe('Retrieval calls per task (all its retrieval runs together).'),
  mean_steps_per_task: z.number().describe('Model turns of retrieval runs per task.'),
  runs: z.int().describe('Prompt runs with retrieval (a task may have several: prompts, attempts).'),
  mean_retrieval_calls: z.number().describe('Mean retrieval calls per run: what the gap and the auto guard compare.'),
  mean_steps: z.number().describe('Mean model turns per run, a forced final answer included.'),
  loop_exhausted_rate: z.number().describe('Share of runs that used every turn without finalizing.'),
  mean_outcome_reward: z.number().nullable().describe('Mean outcome reward of the runs’ workflows; null: none yet.'),
  guard_interventions: z.int().describe('Early finalizes the engagement guard refused.'),
});

const ModelEngagementSchema = z.object({
  model: z.string().describe('provider/model.'),
  ...FiguresSchema.shape,
  gap: z.number().nullable().describe('Mean retrieval calls / the reference’s − 1 (1.33 vs 2.33 → −0.4292).'),
  gap_percent: z.int().nullable().describe('The gap in percent, rounded (−43).'),
  with_guard: FiguresSchema.nullable().describe('Runs an engagement guard applied to.'),
  without_guard: FiguresSchema.nullable().describe('Runs without a guard.'),
});

const RetrievalAnalyticsSchema = z.object({
  reference: z.string().nullable().describe('The model gaps are measured against: `reference`, else the most engaged.'),
  task_type: z.string().nullable(),
  from: z.string().nullable(),
  to: z.string().nullable(),
  models: z.array(ModelEngagementSchema),
});

const RetrievalQuerySchema = z.strictObject({
  reference: ModelSpecSchema.optional().describe('provider/model to measure gaps against; default: the most engaged.'),
  taskType: z.string().min(1).max(100).optional().describe('Only runs of this task type (`task.type`).'),
  from: z.iso.datetime().optional().describe('Runs ended at or after (ISO-8601).'),
  to: z.iso.datetime().optional().describe('Runs ended at or before (ISO-8601).'),
});

export async function analyticsRoutes(
  app: FastifyInstance,
  opts: { deps: { engagement: EngagementStore } },
): Promise<void> {
  const { engagement } = opts.deps;
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.get(
    '/v1/analytics/retrieval',
    {
      schema: {
        operationId: 'getRetrievalAnalytics',
        tags: ['analytics'],
        summary: 'Retrieval engagement per model, and its gap to a reference model',
        description:
          'Per model over your prompt runs with `retrieval`: runs, mean retrieval calls per task, mean steps, ' +
          'loop-exhausted rate, mean outcome reward, guard interventions, and the relative gap of mean retrieval ' +
          'calls to the reference (ratio − 1), all of it also split by whether an engagement guard applied.',
        querystring: RetrievalQuerySchema,
        response: { 200: RetrievalAnalyticsSchema, ...errorResponses(400, 401, 429, 500) },
        responseDescriptions: { 200: 'Engagement per model.' },
      },
    },
    async (request) => {
      const { reference, taskType, from, to } = request.query;
      const sums = await engagement.sums(request.tenantId, {
        ...(taskType === undefined ? {} : { taskType }),
        ...(from === undefined ? {} : { from: Date.parse(from) }),
        ...(to === undefined ? {} : { to: Date.parse(to) + 1 }),
      });
      return { ...engagementReport(sums, reference), task_type: taskType ?? null, from: from ?? null, to: to ?? null };
    },
  );
}
