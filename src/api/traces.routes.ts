import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { NotFoundError } from '../domain/errors.js';
import type { Clock, TraceStore } from '../domain/ports.js';
import { TRACE_STATUSES, type TraceFilter } from '../domain/spans.js';
import { asQueryError } from './http/error-handler.js';
import { errorResponses } from './http/schemas.js';
import { liveDuration, toTotals, usageTotals } from './http/usage-totals.js';
import { TracePageSchema, TraceViewSchema, toTraceSummaryView, toTraceView } from './trace-view.js';

/**
 * Traces (docs/design.md#events-spans-metrics-and-rewards, docs/design.md#http-api-conventions): the spans of a root
 * workflow and its children, in the seed's shape.
 */

const SafeId = /^[A-Za-z0-9_-]{1,100}$/;

const TraceParamsSchema = z.object({
  traceId: z.string().regex(SafeId, { message: 'must be a trace id such as trace_…' }).describe('trace_ + 32 hex.'),
});

const IsoInstant = z.iso.datetime({ offset: true });

const TraceListQuerySchema = z.object({
  workflowId: z
    .string()
    .regex(SafeId, { message: 'must be a workflow id such as wf_…' })
    .optional()
    .describe('The trace containing this workflow (root or child).'),
  groupId: z.string().min(1).max(200).optional().describe("The root workflow's correlationId."),
  status: z.enum(TRACE_STATUSES).optional().describe('active: the root workflow is not terminal yet.'),
  from: IsoInstant.optional().describe('Traces submitted at or after this instant (ISO-8601).'),
  to: IsoInstant.optional().describe('Traces submitted before this instant (ISO-8601).'),
  cursor: z.string().min(1).max(500).optional().describe('next_cursor of the previous page.'),
  limit: z.coerce.number().int().min(1).max(100).default(20).describe('Page size, 1-100.'),
});

export async function traceRoutes(
  app: FastifyInstance,
  opts: { deps: { traces: TraceStore; clock: Clock } },
): Promise<void> {
  const { traces, clock } = opts.deps;
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.get(
    '/v1/traces',
    {
      schema: {
        operationId: 'listTraces',
        tags: ['traces'],
        summary: 'List traces (one per root workflow), newest first',
        description: 'Summaries without spans; filter by workflow, group (correlationId), status and time range.',
        querystring: TraceListQuerySchema,
        response: { 200: TracePageSchema, ...errorResponses(400, 401, 429, 500) },
        responseDescriptions: { 200: 'A page of traces; pass next_cursor as ?cursor= for the next one.' },
      },
    },
    async (request) => {
      const { cursor, limit, workflowId, groupId, status, from, to } = request.query;
      const filter: TraceFilter = {};
      if (workflowId !== undefined) filter.workflowId = workflowId;
      if (groupId !== undefined) filter.groupId = groupId;
      if (status !== undefined) filter.status = status;
      if (from !== undefined) filter.from = Date.parse(from);
      if (to !== undefined) filter.to = Date.parse(to);
      const page = await traces.traces(request.tenantId, filter, cursor ?? null, limit).catch(asQueryError);
      return { items: page.items.map(toTraceSummaryView), next_cursor: page.nextCursor };
    },
  );

  r.get(
    '/v1/traces/:traceId',
    {
      schema: {
        operationId: 'getTrace',
        tags: ['traces'],
        summary: 'A trace with all its spans',
        description:
          'Spans in start order, each with children (derived from parent_id) and its type fields ' +
          '(agent_name, model, tokens_in, …), in the loki-mode trace shape.',
        params: TraceParamsSchema,
        response: { 200: TraceViewSchema, ...errorResponses(400, 401, 404, 429, 500) },
        responseDescriptions: { 200: 'The trace.' },
      },
    },
    async (request) => {
      const { traceId } = request.params;
      // Tenant scoping: another tenant's trace is a 404, exactly like one that does not exist.
      const [trace, usage] = await Promise.all([
        traces.trace(request.tenantId, traceId),
        traces.generationUsage(request.tenantId, traceId),
      ]);
      if (!trace) throw new NotFoundError(`trace ${traceId}`);
      const everyWorkflow = new Set(usage.map((u) => u.workflowId));
      const duration = liveDuration(trace.startedAt, trace.endedAt, clock.now());
      return toTraceView(trace, toTotals(usageTotals(usage, trace.workflowId, everyWorkflow), duration));
    },
  );
}
