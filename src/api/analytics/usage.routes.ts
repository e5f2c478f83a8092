import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { UsageAnalyticsStore } from '../../domain/ports.js';
import type { UsageWindow } from '../../domain/usage-analytics.js';
import {
  AGENT_DROP,
  LOW_RESULT_QUALITY,
  LOW_SUCCESS_RATE,
  MIN_INSIGHT_CALLS,
  MIN_PATTERN_COUNT,
  modelReport,
  SLOW_TOOL_MS,
  toolReport,
} from '../../metrics/tool-insights.js';
import { errorResponses } from '../http/schemas.js';

/**
 * Tool analytics and model analytics (docs/design.md#events-spans-metrics-and-rewards,
 * docs/design.md#http-api-conventions): GET /v1/analytics/tools and /v1/analytics/models.
 */

const WindowQuerySchema = z.strictObject({
  from: z.iso.datetime().optional().describe('At or after (ISO-8601); default: the beginning.'),
  to: z.iso.datetime().optional().describe('At or before (ISO-8601); default: now.'),
});

const ToolSchema = z.object({
  calls: z.int(),
  success_rate: z.number().describe('Calls that returned a result (not a tool-result error) / calls.'),
  avg_efficiency: z
    .number()
    .nullable()
    .describe(
      'Mean efficiency_score of the workflows that called the tool in the window, each once; null: none ended.',
    ),
  avg_latency_ms: z.number(),
  avg_result_quality: z
    .number()
    .describe('Share of calls that succeeded and whose prompt node then completed (the answer they fed was accepted).'),
  common_patterns: z
    .array(z.string())
    .describe(
      `"tool → next": the tools most often called next in the same prompt node, at least ${MIN_PATTERN_COUNT} times, most frequent first (up to 3).`,
    ),
  by_agent: z.record(z.string(), z.object({ calls: z.int(), success: z.number().describe('Success rate.') })),
});

const ToolAnalyticsSchema = z.object({
  from: z.string().nullable(),
  to: z.string().nullable(),
  by_tool: z.record(z.string(), ToolSchema),
  insights: z.array(z.string()).describe('Produced by the rules in the operation description.'),
});

const ModelSchema = z.object({
  model: z.string().describe('provider/model.'),
  simulated: z.boolean().describe('A sim/* model: its money is in the simulated_ fields, never in cost_usd.'),
  calls: z.int().describe('Logical calls (the efficiency records’ by_model).'),
  tokens_in: z.int(),
  tokens_out: z.int(),
  cost_usd: z.number().describe('Money spent (0 for a simulated model).'),
  simulated_cost_usd: z.number().describe('What a sim/* model’s calls would have cost at its tier price: not money.'),
  latency_ms: z
    .object({ p50: z.number().nullable(), p95: z.number().nullable() })
    .describe(
      'agentPromptEnd.duration of the calls that ended (transport retries included), nearest rank. Whole UTC ' +
        'hours of the window are read from a histogram whose bucket floors are powers of 1.1: a percentile is ' +
        'then the floor of its bucket, at most ~9% (1 − 1/1.1) below the exact value, never above it.',
    ),
  call_success_rate: z.number().nullable().describe('Ended calls without an error / ended calls.'),
  tasks: z.int().describe('Workflows that used the model.'),
  success_rate: z.number().describe('Of those, the share with outcome success.'),
  mean_aggregate_reward: z.number().nullable(),
  cost_per_successful_task_usd: z.number().nullable().describe('Real money / successful tasks; null for sim/*.'),
  simulated_cost_per_successful_task_usd: z.number().nullable().describe('Simulated money / successful tasks.'),
});

const ModelAnalyticsSchema = z.object({
  from: z.string().nullable(),
  to: z.string().nullable(),
  models: z.array(ModelSchema),
  totals: z
    .object({ cost_usd: z.number(), simulated_cost_usd: z.number() })
    .describe('Real and simulated money, kept apart: never add them.'),
});

function windowOf(query: { from?: string | undefined; to?: string | undefined }, now: number): UsageWindow {
  return {
    from: query.from === undefined ? 0 : Date.parse(query.from),
    to: (query.to === undefined ? now : Date.parse(query.to)) + 1,
  };
}

export async function usageAnalyticsRoutes(
  app: FastifyInstance,
  opts: { deps: { usage: UsageAnalyticsStore; clock: { now(): number } } },
): Promise<void> {
  const { usage, clock } = opts.deps;
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.get(
    '/v1/analytics/tools',
    {
      schema: {
        operationId: 'getToolAnalytics',
        tags: ['analytics'],
        summary: 'Per tool: calls, success rate, latency, result quality, common patterns, by agent, and insights',
        description:
          'From your tool_calls rows made in the window. avg_result_quality = share of calls that succeeded and ' +
          'whose prompt node completed; common_patterns = the tools most often called next in the same node. ' +
          `Insights (a tool or agent needs ${MIN_INSIGHT_CALLS} calls): success rate < ${LOW_SUCCESS_RATE} → ` +
          `"X fails N% of calls"; otherwise result quality < ${LOW_RESULT_QUALITY} → "X succeeds but only N% of its ` +
          `results feed a completed node"; mean latency ≥ ${SLOW_TOOL_MS} ms → "X averages N ms per call"; an agent ` +
          `at 100% on a tool more than one agent uses → "A agent 100% success with X"; an agent ${AGENT_DROP} or more ` +
          'below the tool’s rate → "X success drops to 0.65 for agent A".',
        querystring: WindowQuerySchema,
        response: { 200: ToolAnalyticsSchema, ...errorResponses(400, 401, 429, 500) },
        responseDescriptions: { 200: 'Figures per tool and the insights.' },
      },
    },
    async (request) => {
      const { from, to } = request.query;
      const sums = await usage.toolCalls(request.tenantId, windowOf(request.query, clock.now()));
      return { from: from ?? null, to: to ?? null, ...toolReport(sums) };
    },
  );

  r.get(
    '/v1/analytics/models',
    {
      schema: {
        operationId: 'getModelAnalytics',
        tags: ['analytics'],
        summary: 'Per model: calls, tokens, cost, latency p50/p95, success rate, reward, cost per successful task',
        description:
          'Over the workflows that ended in the window: calls, tokens and cost from their efficiency records’ ' +
          'by_model; latency and call success from their agentPromptEnd events; task success rate, mean ' +
          'aggregate reward and cost per successful task over the workflows that used the model. Simulated ' +
          '(sim/*) money is reported in the simulated_ fields and never summed into real cost.',
        querystring: WindowQuerySchema,
        response: { 200: ModelAnalyticsSchema, ...errorResponses(400, 401, 429, 500) },
        responseDescriptions: { 200: 'Figures per model.' },
      },
    },
    async (request) => {
      const { from, to } = request.query;
      const sums = await usage.models(request.tenantId, windowOf(request.query, clock.now()));
      return { from: from ?? null, to: to ?? null, ...modelReport(sums) };
    },
  );
}
