import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AgentRegistry, Clock, UsageAnalyticsStore } from '../../domain/ports.js';
import {
  buildDashboard,
  EFFICIENCY_TARGET,
  PILLAR_TARGETS,
  SLOW_FACTOR,
  SUCCESS_TARGET,
} from '../../metrics/dashboard.js';
import { MIN_PATTERN_TASKS, TOP_EFFICIENCY, TOP_SUCCESS_RATE } from '../../metrics/patterns.js';
import { selectionSavingsTotal, strategyReport } from '../../metrics/selection.js';
import { errorResponses } from '../http/schemas.js';
import { StrategyFiguresSchema } from './selection.routes.js';

/**
 * GET /v1/dashboard (docs/design.md#events-spans-metrics-and-rewards): loki-mode's Key Metrics Dashboard over a
 * rolling window.
 */

const DAY_MS = 24 * 60 * 60 * 1000;
const Rate = z.number().nullable();

const SummarySchema = z.object({
  tasks_completed: z.int().describe('Workflows that ended in the window (one efficiency record each).'),
  success_rate: Rate.describe('Share with outcome success.'),
  avg_efficiency_score: Rate,
  avg_outcome_reward: Rate.describe('Over the rewards created in the window.'),
  avg_preference_reward: Rate.describe('Over the rewards with feedback; null without any.'),
  avg_recovery_rate: Rate.describe('Over the records that had retries.'),
  avg_goal_adherence: Rate.describe('Over the records that ran prompts.'),
  avg_agents_per_task: Rate.describe('agents_spawned per record.'),
});

const TrendFigureSchema = z.object({
  current: z.number().nullable(),
  previous: z.number().nullable(),
  change: z.number().nullable().describe('relative: (current − previous)/previous; absolute: current − previous.'),
  kind: z.enum(['relative', 'absolute']),
});

const CostSchema = z
  .object({
    real_usd: z.number().describe('Money spent on real providers.'),
    simulated_usd: z.number().describe('What sim/* calls would have cost: not money, never added to real_usd.'),
  })
  .describe('Σ efficiency cost of the window’s records.');

const FigureValue = z.union([z.number(), CostSchema]).nullable();
const AxisSchema = z.object({
  label: z.string(),
  figures: z.record(z.string(), FigureValue).describe('null: no data in the window (a blind spot).'),
  covered: z.int().describe('Figures with data.'),
  total: z.int(),
  coverage: z.string().describe('"covered/total".'),
});

const DashboardSchema = z.object({
  period: z.string().describe('rolling_<days>_days'),
  selection: z
    .array(StrategyFiguresSchema)
    .describe('Agent selection strategies over the window, as GET /v1/analytics/selection reports them.'),
  window: z.object({
    from: z.string(),
    to: z.string(),
    previous_from: z.string().describe('The previous window of the same length ends where this one starts.'),
  }),
  summary: SummarySchema,
  previous_summary: SummarySchema.describe('The same figures over the previous window.'),
  quality_pillars: z.object({
    tool_selection_accuracy: Rate.describe('Records whose invoked tools were all among their agent’s tools.'),
    tool_reliability_rate: Rate.describe('Successful tool calls / tool calls made in the window.'),
    memory_retrieval_relevance: Rate.describe('Retrieval runs judged relevant / judged runs.'),
    policy_adherence: Rate.describe(
      'guardrail_span checks passed (not triggered) / checks, of the window’s workflows.',
    ),
  }),
  trends: z
    .object({
      efficiency: z.string().describe('"+12% vs previous week"'),
      success_rate: z.string(),
      avg_agents_per_task: z.string().describe('"-0.8 (improving)": fewer agents per task is better.'),
      recovery_rate: z.string(),
    })
    .describe('The seed’s display strings.'),
  trend_figures: z.object({
    efficiency: TrendFigureSchema,
    success_rate: TrendFigureSchema,
    avg_agents_per_task: TrendFigureSchema,
    recovery_rate: TrendFigureSchema,
  }),
  top_performing_patterns: z.array(z.string()),
  areas_for_improvement: z.array(z.string()),
  cost: CostSchema,
  previous_cost: CostSchema,
  cache: z.object({
    hits: z.int().describe('cacheHit events of the window’s workflows.'),
    hit_rate: Rate.describe('hits / (hits + logical model calls).'),
    tokens_saved: z.int().describe('Tokens the original calls spent.'),
    cost_saved_usd: z.number().describe('Real money saved.'),
    simulated_cost_saved_usd: z.number().describe('Simulated money saved: not money.'),
  }),
  selection_savings: z
    .object({
      saved_usd: z.number().describe('Real money saved by selection: Σ every strategy’s saved_usd over the window.'),
      simulated_saved_usd: z.number().describe('Simulated money saved by selection: not money.'),
    })
    .describe(
      'Beside `cache`: what agent selection saved against the best-quality candidate of each selection ' +
        '(docs/workflows.md#counterfactual-savings), as GET /v1/analytics/selection reports it.',
    ),
  evaluation_axes: z
    .object({ technical: AxisSchema, human_centered: AxisSchema, safety: AxisSchema, economic: AxisSchema })
    .describe('The seed’s Multi-Dimensional Evaluation: each axis’s figures and how many have data.'),
});

const DashboardQuerySchema = z.strictObject({
  days: z.coerce.number().int().min(1).max(90).default(7).describe('Window length in days, 1-90; default 7.'),
});

const pillarRules = Object.entries(PILLAR_TARGETS)
  .map(([k, v]) => `${k} < ${v}`)
  .join(', ');

export async function dashboardRoutes(
  app: FastifyInstance,
  opts: { deps: { usage: UsageAnalyticsStore; agents: Pick<AgentRegistry, 'strategySums'>; clock: Clock } },
): Promise<void> {
  const { usage, agents, clock } = opts.deps;
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.get(
    '/v1/dashboard',
    {
      schema: {
        operationId: 'getDashboard',
        tags: ['dashboard'],
        summary: 'Key metrics over the last `days` days against the previous window of the same length',
        description:
          'Summary, quality pillars, trends (numbers and display strings), cost (real and simulated apart), cache ' +
          'savings, selection savings, the selection strategies compared, and the four evaluation axes with their coverage. top_performing_patterns: task type × model ' +
          `groups of ≥ ${MIN_PATTERN_TASKS} tasks with success ≥ ${TOP_SUCCESS_RATE} and efficiency ≥ ${TOP_EFFICIENCY}. ` +
          `areas_for_improvement: task type × complexity groups (≥ ${MIN_PATTERN_TASKS} tasks) at ≥ ${SLOW_FACTOR}x ` +
          `their baseline time; task types with efficiency < ${EFFICIENCY_TARGET} or success < ${SUCCESS_TARGET}; ` +
          `pillars below target (${pillarRules}); evaluation axes with figures without data.`,
        querystring: DashboardQuerySchema,
        response: { 200: DashboardSchema, ...errorResponses(400, 401, 429, 500) },
        responseDescriptions: { 200: 'The dashboard.' },
      },
    },
    async (request) => {
      const { days } = request.query;
      const length = days * DAY_MS;
      // Half-open windows [from, to): `to` is just past now, so what ended this millisecond counts.
      const to = clock.now() + 1;
      const from = to - length;
      const [current, previous, strategies] = await Promise.all([
        usage.dashboard(request.tenantId, { from, to }),
        usage.dashboard(request.tenantId, { from: from - length, to: from }),
        // The selection strategies compared over the same window (strategySums' `to` is inclusive).
        agents.strategySums(request.tenantId, { from, to: to - 1 }),
      ]);
      const iso = (ms: number) => new Date(ms).toISOString();
      return {
        ...buildDashboard(current, previous, days),
        window: { from: iso(from), to: iso(to), previous_from: iso(from - length) },
        selection: strategyReport(strategies),
        selection_savings: selectionSavingsTotal(strategies),
      };
    },
  );
}
