import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AppError, NotFoundError } from '../../domain/errors.js';
import { EfficiencyRecordSchema, type Feedback, FeedbackSchema, RewardRecordSchema } from '../../domain/metrics.js';
import type { Clock, MetricsStore, WorkflowStore } from '../../domain/ports.js';
import type { WorkflowRecord } from '../../domain/records.js';
import { redactSecrets } from '../../domain/redact.js';
import { isTerminal } from '../../domain/status.js';
import { COMPLEXITIES } from '../../domain/task.js';
import { efficiencyAggregate, rewardAverages } from '../../metrics/aggregate.js';
import { withFeedback } from '../../metrics/rewards.js';
import { asQueryError } from '../http/error-handler.js';
import { ownedWorkflow } from '../http/owned-workflow.js';
import { errorResponses, IdParamsSchema } from '../http/schemas.js';

/**
 * Efficiency records, rewards and feedback (docs/design.md#events-spans-metrics-and-rewards,
 * docs/design.md#http-api-conventions).
 */

export interface MetricsRouteDeps {
  metrics: MetricsStore;
  store: WorkflowStore;
  clock: Clock;
}

const AveragesSchema = z.object({
  count: z.int(),
  avg_efficiency_score: z.number().nullable(),
  avg_wall_time_seconds: z.number().nullable(),
  success_rate: z.number().nullable(),
  avg_retry_count: z.number().nullable(),
  avg_cost_usd: z.number().nullable().describe('Money spent on real providers, per record.'),
  avg_simulated_cost_usd: z
    .number()
    .nullable()
    .describe('What sim/* calls would have cost at their tier price, per record: not money.'),
});

/** A snake_case envelope: its records are the seed's snake_case records. */
const NextCursorSchema = z.string().nullable().describe('Pass as ?cursor= for the next page; null on the last.');

const EfficiencyListSchema = z.object({
  records: z.array(EfficiencyRecordSchema).describe('Newest first, one page.'),
  next_cursor: NextCursorSchema,
  aggregate: z
    .object({ by_task_type: z.record(z.string(), AveragesSchema), overall: AveragesSchema })
    .describe('Running averages by task type over the whole filtered window, every page (the seed’s aggregate.json).'),
});

const RewardListSchema = z.object({
  records: z.array(RewardRecordSchema).describe('Newest first, one page.'),
  next_cursor: NextCursorSchema,
  averages: z
    .object({
      count: z.int(),
      outcome: z.number().nullable(),
      efficiency: z.number().nullable(),
      preference: z.number().nullable().describe('Over the records that have feedback.'),
      aggregate: z.number().nullable(),
    })
    .describe('Over the whole filtered window, every page.'),
});

const WorkflowMetricsSchema = z.object({
  efficiency: EfficiencyRecordSchema,
  reward: RewardRecordSchema.nullable().describe(
    'null for a cancelled workflow or one rejected at its checkpoint: neither earns a reward (no agent result to score).',
  ),
});

const RangeQuery = {
  from: z.iso.datetime().optional().describe('Completed at or after (ISO-8601).'),
  to: z.iso.datetime().optional().describe('Completed at or before (ISO-8601).'),
  cursor: z.string().min(1).max(500).optional().describe('next_cursor of the previous page.'),
  limit: z.coerce.number().int().min(1).max(1000).default(100).describe('Records to return, newest first; 1-1000.'),
};
// Strict: a misspelt filter (the old `task_type`) is a 400 with a suggestion, not silently ignored.
const EfficiencyQuerySchema = z.strictObject({
  ...RangeQuery,
  taskType: z.string().min(1).max(100).optional().describe('Only records of this task type (`task.type`).'),
  complexity: z.enum(COMPLEXITIES).optional().describe('Only records of this complexity.'),
});
const RewardsQuerySchema = z.strictObject(RangeQuery);

function range(query: { from?: string | undefined; to?: string | undefined }): { from?: number; to?: number } {
  const out: { from?: number; to?: number } = {};
  if (query.from !== undefined) out.from = Date.parse(query.from);
  if (query.to !== undefined) out.to = Date.parse(query.to);
  return out;
}

/** A note is the user's free text, kept with the feedback: a secret pasted into it is not (docs/design.md#security). */
function redactFeedback(feedback: Feedback): Feedback {
  return feedback.note === undefined ? feedback : { ...feedback, note: redactSecrets(feedback.note) };
}

function notTerminal(workflow: WorkflowRecord): AppError {
  return new AppError('NOT_TERMINAL', `workflow ${workflow.id} is ${workflow.status}; metrics exist once it ends`);
}

export async function metricsRoutes(app: FastifyInstance, opts: { deps: MetricsRouteDeps }): Promise<void> {
  const { deps } = opts;
  const r = app.withTypeProvider<ZodTypeProvider>();

  const endedWorkflow = async (tenantId: string, id: string): Promise<WorkflowRecord> => {
    const workflow = await ownedWorkflow(deps.store, tenantId, id);
    if (!isTerminal(workflow.status)) throw notTerminal(workflow);
    return workflow;
  };

  r.get(
    '/v1/workflows/:id/metrics',
    {
      schema: {
        operationId: 'getWorkflowMetrics',
        tags: ['metrics'],
        summary: 'Efficiency record and reward of a finished workflow',
        description: 'A 409 NOT_TERMINAL while the workflow runs.',
        params: IdParamsSchema,
        response: { 200: WorkflowMetricsSchema, ...errorResponses(400, 401, 404, 409, 429, 500) },
        responseDescriptions: {
          200: 'The efficiency record and the reward.',
          409: 'The workflow has not ended yet (NOT_TERMINAL).',
        },
      },
    },
    async (request) => {
      const { id } = request.params;
      await endedWorkflow(request.tenantId, id);
      const [efficiency, reward] = await Promise.all([
        deps.metrics.efficiency(request.tenantId, id),
        deps.metrics.reward(request.tenantId, id),
      ]);
      if (!efficiency) throw new NotFoundError(`efficiency record of workflow ${id}`);
      return { efficiency, reward: reward ?? null };
    },
  );

  r.get(
    '/v1/metrics/efficiency',
    {
      schema: {
        operationId: 'listEfficiencyRecords',
        tags: ['metrics'],
        summary: 'Efficiency records and their running averages by task type',
        querystring: EfficiencyQuerySchema,
        response: { 200: EfficiencyListSchema, ...errorResponses(400, 401, 429, 500) },
        responseDescriptions: { 200: 'The records and their averages.' },
      },
    },
    async (request) => {
      const { taskType, complexity, cursor, limit } = request.query;
      const filter = {
        ...range(request.query),
        ...(taskType === undefined ? {} : { taskType }),
        ...(complexity === undefined ? {} : { complexity }),
      };
      const [page, sums] = await Promise.all([
        deps.metrics.listEfficiency(request.tenantId, filter, cursor ?? null, limit).catch(asQueryError),
        deps.metrics.efficiencySums(request.tenantId, filter),
      ]);
      return { records: page.items, next_cursor: page.nextCursor, aggregate: efficiencyAggregate(sums) };
    },
  );

  r.post(
    '/v1/workflows/:id/feedback',
    {
      schema: {
        operationId: 'submitWorkflowFeedback',
        tags: ['metrics'],
        summary: 'Record user feedback; recomputes the preference and aggregate rewards',
        description:
          'Actions (closed vocabulary): commit 0.8, deploy 1.0, no_edits 0.6, revert −1.0, manual_fix −0.5, ' +
          'retry_different −0.3. The preference reward is the mean over every action recorded for the workflow. ' +
          '409 while the workflow runs (NOT_TERMINAL) and for a cancelled or checkpoint-rejected workflow, which has no reward.',
        params: IdParamsSchema,
        body: FeedbackSchema,
        response: {
          200: z.object({ reward: RewardRecordSchema }),
          ...errorResponses(400, 401, 404, 409, 413, 415, 429, 500),
        },
        responseDescriptions: {
          200: 'The recomputed reward.',
          409: 'The workflow has not ended (NOT_TERMINAL), or was cancelled or rejected at its checkpoint and has no reward (CONFLICT).',
        },
      },
    },
    async (request) => {
      const { id } = request.params;
      const workflow = await endedWorkflow(request.tenantId, id);
      const at = deps.clock.now();
      const reward = await deps.metrics.addFeedback(
        request.tenantId,
        id,
        redactFeedback(request.body),
        at,
        (actions, current) => withFeedback(current, actions, new Date(at).toISOString()),
      );
      if (!reward) {
        const why =
          workflow.status === 'cancelled'
            ? 'was cancelled'
            : workflow.error?.code === 'CHECKPOINT_REJECTED'
              ? 'was rejected at its checkpoint'
              : 'has no reward record';
        throw new AppError('CONFLICT', `workflow ${id} ${why}: there is no reward to adjust`);
      }
      return { reward };
    },
  );

  r.get(
    '/v1/rewards',
    {
      schema: {
        operationId: 'listRewards',
        tags: ['metrics'],
        summary: 'Reward records and their averages',
        querystring: RewardsQuerySchema,
        response: { 200: RewardListSchema, ...errorResponses(400, 401, 429, 500) },
        responseDescriptions: { 200: 'The records and their averages.' },
      },
    },
    async (request) => {
      const { cursor, limit } = request.query;
      const window = range(request.query);
      const [page, sums] = await Promise.all([
        deps.metrics.listRewards(request.tenantId, window, cursor ?? null, limit).catch(asQueryError),
        deps.metrics.rewardSums(request.tenantId, window),
      ]);
      return { records: page.items, next_cursor: page.nextCursor, averages: rewardAverages(sums) };
    },
  );
}
