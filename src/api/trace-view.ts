import { z } from 'zod';
import {
  AutoStrategySchema,
  CostAwareReportSchema,
  type ResolvedAgent,
  SELECTION_STRATEGIES,
} from '../domain/agent-selection.js';
import { ErrorInfoSchema } from '../domain/errors.js';
import { AGENT_ROLES } from '../domain/names.js';
import {
  SPAN_FIELD_SCHEMAS,
  SPAN_STATUSES,
  type SpanFieldsByType,
  type SpanRecord,
  type SpanType,
  TRACE_STATUSES,
  type TraceRecord,
  type TraceSummary,
} from '../domain/spans.js';
import { COMPLEXITIES } from '../domain/task.js';
import type { Totals, UsageFigures } from './http/usage-totals.js';
import { iso } from './workflows/workflow-view.js';

/**
 * Pure presentation of traces in the loki-mode seed's shape (docs/design.md#events-spans-metrics-and-rewards):
 * snake_case, ISO-8601
 * times, spans in start order, each with `children` derived from `parent_id`, and the span
 * type's own fields inline. The schemas document and serialize GET /v1/traces[/{traceId}].
 */

const IsoTime = z.iso.datetime().nullable();

/**
 * A handoff span keeps the selection the workflow definition holds (camelCase, as the workflow API
 * shows it); the trace shows it in the seed's casing.
 */
const SelectionViewSchema = z
  .object({
    role: z.enum(AGENT_ROLES),
    strategy: z.enum(SELECTION_STRATEGIES),
    candidates: z.array(
      z.object({
        agent: z.string(),
        version: z.int().nullable().describe('Registry version; null: an agent of the definition.'),
        runs: z.int().describe('Past rewarded runs of the same task type and complexity.'),
        mean_reward: z.number().nullable().describe('Their mean aggregate reward; null without history.'),
        score: z.number().describe('What the strategy ranked by (cost_aware: the draw of its success rate).'),
        successes: z.int().optional().describe('Those runs with outcome success.'),
        expected_cost_usd: z.number().nullable().optional().describe('Mean real cost of those runs.'),
        expected_simulated_cost_usd: z
          .number()
          .nullable()
          .optional()
          .describe('Mean simulated cost of those runs (not money).'),
        below_leader: z
          .number()
          .nullable()
          .optional()
          .describe("cost_aware: P(success < the leader's draw − tolerance); null: the leader."),
        eligible: z.boolean().optional().describe('cost_aware: not ruled out; the cheapest eligible candidate wins.'),
      }),
    ),
    task_type: z.string(),
    complexity: z.enum(COMPLEXITIES),
    auto: z
      .object({
        reason: AutoStrategySchema.shape.reason,
        min_runs: z.int().describe('Rewarded runs each strategy needs on the task type before they are compared.'),
        window_uses: z.int().describe('Newest selecting uses per strategy and task type the figures cover.'),
        figures: z.array(
          z.object({
            strategy: z.enum(SELECTION_STRATEGIES),
            runs: z.int(),
            rewarded_runs: z.int(),
            mean_aggregate_reward: z.number().nullable(),
            success_rate: z.number().nullable(),
          }),
        ),
      })
      .optional()
      .describe('Present when the prompt asked for `strategy: "auto"`: why it resolved as it did.'),
    cost_aware: z
      .object({
        tolerance: z.number(),
        confidence: z.number(),
        min_runs: z.int(),
        leader: z.string(),
        reason: CostAwareReportSchema.shape.reason,
      })
      .optional()
      .describe('Present for cost_aware (docs/workflows.md#cost-aware-selection): its settings, leader and why.'),
    savings: z
      .object({
        reference: z.string().nullable(),
        saved_usd: z.number().nullable(),
        saved_simulated_usd: z.number().nullable(),
      })
      .optional()
      .describe(
        'The counterfactual (docs/workflows.md#counterfactual-savings): the best-quality candidate and the expected ' +
          'cost per run saved against it.',
      ),
  })
  .describe("When to_agent was selected: role, strategy, task type, complexity and every candidate's score.");

function toSelectionView(s: NonNullable<ResolvedAgent['selection']>): z.infer<typeof SelectionViewSchema> {
  return {
    role: s.role,
    strategy: s.strategy,
    candidates: s.candidates.map((c) => ({
      agent: c.agent,
      version: c.version,
      runs: c.runs,
      mean_reward: c.meanReward,
      score: c.score,
      ...(c.successes === undefined ? {} : { successes: c.successes }),
      ...(c.expectedCostUsd === undefined ? {} : { expected_cost_usd: c.expectedCostUsd }),
      ...(c.expectedSimulatedCostUsd === undefined ? {} : { expected_simulated_cost_usd: c.expectedSimulatedCostUsd }),
      ...(c.belowLeader === undefined ? {} : { below_leader: c.belowLeader }),
      ...(c.eligible === undefined ? {} : { eligible: c.eligible }),
    })),
    task_type: s.taskType,
    complexity: s.complexity,
    ...(s.costAware === undefined
      ? {}
      : {
          cost_aware: {
            tolerance: s.costAware.tolerance,
            confidence: s.costAware.confidence,
            min_runs: s.costAware.minRuns,
            leader: s.costAware.leader,
            reason: s.costAware.reason,
          },
        }),
    ...(s.savings === undefined
      ? {}
      : {
          savings: {
            reference: s.savings.reference,
            saved_usd: s.savings.savedUsd,
            saved_simulated_usd: s.savings.savedSimulatedUsd,
          },
        }),
    ...(s.auto === undefined
      ? {}
      : {
          auto: {
            reason: s.auto.reason,
            min_runs: s.auto.minRuns,
            window_uses: s.auto.windowUses,
            figures: s.auto.figures.map((f) => ({
              strategy: f.strategy,
              runs: f.runs,
              rewarded_runs: f.rewardedRuns,
              mean_aggregate_reward: f.meanAggregateReward,
              success_rate: f.successRate,
            })),
          },
        }),
  };
}

/** The fields of a span type as the trace shows them. */
function fieldViewShape<T extends SpanType>(type: T) {
  const shape = SPAN_FIELD_SCHEMAS[type].shape;
  return type === 'handoff_span' ? { ...shape, selection: SelectionViewSchema.optional() } : shape;
}

/** One span view per type, so the OpenAPI document lists each type's fields. */
function spanViewSchema<T extends SpanType>(type: T) {
  return z
    .looseObject({
      span_id: z.string().describe('span_ + 24 hex, time-ordered.'),
      parent_id: z.string().nullable(),
      type: z.literal(type),
      ...fieldViewShape(type),
      started_at: z.iso.datetime(),
      ended_at: IsoTime.describe('null while the span is open.'),
      status: z.enum(SPAN_STATUSES).nullable().describe('null while open; interrupted when the process stopped.'),
      error: ErrorInfoSchema.optional(),
      children: z.array(z.string()).describe('Ids of the spans whose parent_id is this span, in start order.'),
      workflow_id: z.string().describe('The workflow (root or child) the span belongs to.'),
      node_id: z.string().nullable().describe('The node the span belongs to, when it belongs to one.'),
    })
    .describe(type);
}

export const SpanViewSchema = z.discriminatedUnion('type', [
  spanViewSchema('agent_span'),
  spanViewSchema('generation_span'),
  spanViewSchema('function_span'),
  spanViewSchema('guardrail_span'),
  spanViewSchema('handoff_span'),
  spanViewSchema('custom_span'),
]);
export type SpanView = z.infer<typeof SpanViewSchema>;

const traceHeaderShape = {
  trace_id: z.string().describe('trace_ + 32 hex.'),
  workflow_id: z.string().describe('The root workflow.'),
  workflow_name: z.string(),
  group_id: z.string().nullable().describe("The root workflow's correlationId."),
  status: z.enum(TRACE_STATUSES).describe('active until the root workflow is terminal.'),
  started_at: z.iso.datetime().describe('When the root workflow was submitted.'),
  ended_at: IsoTime,
};

export const TraceSummaryViewSchema = z.object({ ...traceHeaderShape, span_count: z.int() }).describe('TraceSummary');
export type TraceSummaryView = z.infer<typeof TraceSummaryViewSchema>;

const usageShape = {
  provider_calls: z.int().describe('Provider calls made (cache hits excluded; calls in flight included).'),
  tokens_in: z.int().describe('Input tokens spent (0 for cache hits): the sum over the generation spans.'),
  tokens_out: z.int(),
  cost_usd: z.number().describe('Money spent on real providers.'),
  simulated_cost_usd: z.number().describe('What sim/* calls would have cost at their tier price: not money.'),
};

export const TraceTotalsSchema = z
  .object({
    duration_ms: z.int().nullable().describe('The root workflow, start to end (to now while running).'),
    ...usageShape,
    with_children: z.object(usageShape).describe('The whole trace: the root workflow and every child workflow.'),
  })
  .describe("The root workflow's own figures, and the trace's with its children.");

export const TraceViewSchema = z
  .object({ ...traceHeaderShape, totals: TraceTotalsSchema, spans: z.array(SpanViewSchema) })
  .describe('Trace');
export type TraceView = z.infer<typeof TraceViewSchema>;

export const TracePageSchema = z.object({
  items: z.array(TraceSummaryViewSchema),
  next_cursor: z.string().nullable().describe('Pass as ?cursor= for the next page; null on the last.'),
});

/** Keys a span's type fields may not shadow. */
const RESERVED = new Set([
  'span_id',
  'parent_id',
  'type',
  'started_at',
  'ended_at',
  'status',
  'error',
  'children',
  'workflow_id',
  'node_id',
]);

function header(t: Omit<TraceSummary, 'spanCount'>) {
  return {
    trace_id: t.traceId,
    workflow_id: t.workflowId,
    workflow_name: t.workflowName,
    group_id: t.groupId,
    status: t.status,
    started_at: new Date(t.startedAt).toISOString(),
    ended_at: iso(t.endedAt),
  };
}

export function toTraceSummaryView(t: TraceSummary): TraceSummaryView {
  return { ...header(t), span_count: t.spanCount };
}

/** Start order; ties (same millisecond) fall back to the time-ordered id. */
function byStart(a: SpanRecord, b: SpanRecord): number {
  return a.startedAt - b.startedAt || (a.spanId < b.spanId ? -1 : a.spanId > b.spanId ? 1 : 0);
}

export function toSpanView(span: SpanRecord, children: readonly string[]): SpanView {
  const view: Record<string, unknown> = { span_id: span.spanId, parent_id: span.parentId, type: span.type };
  for (const [key, value] of Object.entries(span.fields)) {
    if (!RESERVED.has(key)) view[key] = value;
  }
  if (span.type === 'handoff_span') {
    const { selection } = span.fields as SpanFieldsByType['handoff_span'];
    if (selection !== undefined) view.selection = toSelectionView(selection);
  }
  view.started_at = new Date(span.startedAt).toISOString();
  view.ended_at = iso(span.endedAt);
  view.status = span.status;
  if (span.error !== null) view.error = { code: span.error.code, message: span.error.message };
  view.children = [...children];
  view.workflow_id = span.workflowId;
  view.node_id = span.nodeId;
  // The keys above are exactly SpanViewSchema's; the fields come from the same per-type schemas.
  return view as SpanView;
}

function usageView(figures: UsageFigures) {
  return {
    provider_calls: figures.providerCalls,
    tokens_in: figures.tokensIn,
    tokens_out: figures.tokensOut,
    cost_usd: figures.costUsd,
    simulated_cost_usd: figures.simulatedCostUsd,
  };
}

export function toTraceView(trace: TraceRecord, totals: Totals): TraceView {
  const spans = [...trace.spans].sort(byStart);
  const children = new Map<string, string[]>();
  for (const span of spans) {
    if (span.parentId === null) continue;
    const siblings = children.get(span.parentId);
    if (siblings === undefined) children.set(span.parentId, [span.spanId]);
    else siblings.push(span.spanId);
  }
  return {
    ...header(trace),
    totals: { duration_ms: totals.durationMs, ...usageView(totals), with_children: usageView(totals.withChildren) },
    spans: spans.map((s) => toSpanView(s, children.get(s.spanId) ?? [])),
  };
}
