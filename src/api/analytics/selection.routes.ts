import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { SELECTION_STRATEGIES } from '../../domain/agent-selection.js';
import type { AgentRegistry } from '../../domain/ports.js';
import { savingsReport, strategyReport } from '../../metrics/selection.js';
import { errorResponses } from '../http/schemas.js';

/**
 * Agent selection strategies compared (docs/design.md#complexity-allocation-selection-and-review): the seed's "A/B
 * test new selection strategies".
 */

export const StrategyFiguresSchema = z.object({
  strategy: z.enum(SELECTION_STRATEGIES),
  runs: z.int().describe('Ended runs with a prompt that selected its agent with this strategy (each run once).'),
  mean_aggregate_reward: z.number().nullable().describe('Mean aggregate reward of those runs; null: none rewarded.'),
  success_rate: z.number().nullable().describe('Share of those runs with outcome success; null: no runs.'),
  cost_usd: z.number().describe('Their real model cost.'),
  simulated_cost_usd: z.number().describe('What their sim/* calls would have cost (not money).'),
  cost_per_success_usd: z.number().nullable().describe('cost_usd / successful runs; null: no success.'),
  simulated_cost_per_success_usd: z
    .number()
    .nullable()
    .describe('simulated_cost_usd / successful runs; null: no success.'),
  saved_usd: z
    .number()
    .describe(
      'Σ counterfactual savings of its selections: the best-quality candidate’s expected real cost per run − the ' +
        'chosen one’s (docs/workflows.md#counterfactual-savings).',
    ),
  simulated_saved_usd: z.number().describe('The same in simulated money (not money, never added to saved_usd).'),
});

const SavingsSchema = z.object({
  task_type: z.string(),
  strategy: z.enum(SELECTION_STRATEGIES),
  runs: z.int().describe('Ended runs with a prompt that selected with this strategy (each run once).'),
  counted: z.int().describe('Their selections with a known saving (a reference and a chosen candidate with history).'),
  saved_usd: z.number().describe('Σ of those savings in real money.'),
  simulated_saved_usd: z.number().describe('Σ in simulated money (not money).'),
});

const SelectionAnalyticsSchema = z.object({
  task_type: z.string().nullable(),
  from: z.string().nullable(),
  to: z.string().nullable(),
  strategies: z
    .array(StrategyFiguresSchema)
    .describe('Every strategy, in a fixed order (greedy, thompson, cost_aware).'),
  savings: z
    .array(SavingsSchema)
    .describe('Counterfactual savings per task type and strategy, by task type then strategy; only pairs with runs.'),
});

const SelectionQuerySchema = z.strictObject({
  taskType: z.string().min(1).max(100).optional().describe('Only runs of this task type (`task.type`).'),
  from: z.iso.datetime().optional().describe('Runs ended at or after (ISO-8601).'),
  to: z.iso.datetime().optional().describe('Runs ended at or before (ISO-8601).'),
});

export async function selectionRoutes(app: FastifyInstance, opts: { deps: { agents: AgentRegistry } }): Promise<void> {
  const { agents } = opts.deps;
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.get(
    '/v1/analytics/selection',
    {
      schema: {
        operationId: 'getSelectionAnalytics',
        tags: ['analytics'],
        summary: 'Agent selection strategies compared over a window',
        description:
          'Per strategy (greedy, thompson, cost_aware), over your ended runs in which a prompt selected its agent: runs, ' +
          'mean aggregate reward, success rate, cost per successful task and the savings against the best-quality ' +
          'candidate (real and simulated money apart); the savings also per task type and strategy.',
        querystring: SelectionQuerySchema,
        response: { 200: SelectionAnalyticsSchema, ...errorResponses(400, 401, 429, 500) },
        responseDescriptions: { 200: 'The figures of each strategy.' },
      },
    },
    async (request) => {
      const { taskType, from, to } = request.query;
      const filter = {
        ...(taskType === undefined ? {} : { taskType }),
        ...(from === undefined ? {} : { from: Date.parse(from) }),
        ...(to === undefined ? {} : { to: Date.parse(to) }),
      };
      const [sums, savings] = await Promise.all([
        agents.strategySums(request.tenantId, filter),
        agents.savingsSums(request.tenantId, filter),
      ]);
      return {
        task_type: taskType ?? null,
        from: from ?? null,
        to: to ?? null,
        strategies: strategyReport(sums),
        savings: savingsReport(savings),
      };
    },
  );
}
