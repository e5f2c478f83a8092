import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Clock, UsageAnalyticsStore } from '../../domain/ports.js';
import {
  MAX_PATTERNS,
  MIN_PATTERN_TASKS,
  PATTERN_WINDOW_DAYS,
  TOP_EFFICIENCY,
  TOP_SUCCESS_RATE,
  topPerformingPatterns,
} from '../../metrics/patterns.js';
import { errorResponses } from '../http/schemas.js';

/**
 * GET /v1/analytics/patterns (docs/analytics.md#successful-patterns): the dashboard's top performing
 * patterns as records, by the same rule over the same sums (metrics/patterns.ts).
 */

const DAY_MS = 24 * 60 * 60 * 1000;

const PatternSchema = z.object({
  task_type: z.string(),
  model: z.string(),
  tasks: z.int().describe('Workflows of this task type that used this model and ended in the window.'),
  success_rate: z.number().describe('Share of them with outcome success.'),
  avg_efficiency: z.number().describe('Their mean efficiency score.'),
  text: z.string().describe('The dashboard’s display string (its top_performing_patterns entry).'),
});

const PatternsSchema = z.object({
  task_type: z.string().nullable().describe('The taskType asked for; null: every task type.'),
  window: z.object({ from: z.string(), to: z.string() }),
  patterns: z.array(PatternSchema).max(MAX_PATTERNS).describe('Best first: success rate, then efficiency, then tasks.'),
});

const PatternsQuerySchema = z.strictObject({
  taskType: z.string().min(1).max(100).optional().describe('Only patterns of this task type (`task.type`).'),
  days: z.coerce
    .number()
    .int()
    .min(1)
    .max(90)
    .default(PATTERN_WINDOW_DAYS)
    .describe(`Window length in days, 1-90; default ${PATTERN_WINDOW_DAYS} (what planning prompts are shown).`),
});

export async function patternRoutes(
  app: FastifyInstance,
  opts: { deps: { usage: Pick<UsageAnalyticsStore, 'taskModels'>; clock: Clock } },
): Promise<void> {
  const { usage, clock } = opts.deps;
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.get(
    '/v1/analytics/patterns',
    {
      schema: {
        operationId: 'getPatternAnalytics',
        tags: ['analytics'],
        summary: 'Top performing task type × model patterns over the last `days` days',
        description:
          `Task type × model groups of your workflows that ended in the window, with ≥ ${MIN_PATTERN_TASKS} tasks, ` +
          `success ≥ ${TOP_SUCCESS_RATE} and efficiency ≥ ${TOP_EFFICIENCY}; at most ${MAX_PATTERNS}. The dashboard's ` +
          'top_performing_patterns are their `text`; planning prompts of a workflow with that task type are shown them.',
        querystring: PatternsQuerySchema,
        response: { 200: PatternsSchema, ...errorResponses(400, 401, 429, 500) },
        responseDescriptions: { 200: 'The patterns, best first.' },
      },
    },
    async (request) => {
      const { taskType, days } = request.query;
      // Half-open [from, to), as the dashboard's: what ended this millisecond counts.
      const to = clock.now() + 1;
      const from = to - days * DAY_MS;
      const groups = await usage.taskModels(request.tenantId, { from, to });
      return {
        task_type: taskType ?? null,
        window: { from: new Date(from).toISOString(), to: new Date(to).toISOString() },
        patterns: topPerformingPatterns(groups, taskType),
      };
    },
  );
}
