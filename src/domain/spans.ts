import { z } from 'zod';
import { type ResolvedAgent, ResolvedAgentSchema } from './agent-selection.js';
import type { ErrorInfo } from './errors.js';

/**
 * Tracing spans (docs/design.md#events-spans-metrics-and-rewards; loki-mode / OpenAI Agents SDK shapes). A trace is
 * every span of one
 * root workflow and its child workflows (they share `traceId`); `children` is derived from
 * `parentId` when a trace is read, never stored.
 */
export const SPAN_TYPES = [
  'agent_span',
  'generation_span',
  'function_span',
  'guardrail_span',
  'handoff_span',
  'custom_span',
] as const;
export type SpanType = (typeof SPAN_TYPES)[number];

/** `null` while the span is open. `interrupted`: the process died (or shut down) while it was open. */
export const SPAN_STATUSES = ['ok', 'error', 'interrupted'] as const;
export type SpanStatus = (typeof SPAN_STATUSES)[number];

/** The type-specific fields, with the seed's snake_case names (they are the API shape too). */
export interface SpanFieldsByType {
  agent_span: { agent_name: string; instructions_hash?: string | null; model?: string | null };
  generation_span: {
    model: string;
    /** Tokens spent: 0 on a cache hit (what a hit saved is `tokens_saved_*`). */
    tokens_in: number;
    tokens_out: number;
    latency_ms: number;
    cache_hit: boolean;
    cache_key: string | null;
    cost_usd: number;
    tokens_saved_in?: number;
    tokens_saved_out?: number;
    cost_saved_usd?: number;
    /** A hit that waited on an identical call in flight (docs/design.md#caching). */
    collapsed?: boolean;
    /** A sim/* model: the costs are what the call would have cost at its tier price, not money. */
    simulated?: boolean;
  };
  function_span: { function_name: string; arguments: unknown; result: unknown; success: boolean };
  guardrail_span: { guardrail_name: string; triggered: boolean; blocking: boolean };
  handoff_span: {
    from_agent: string;
    to_agent: string;
    context_passed?: unknown;
    /**
     * The registry version of `to_agent` (docs/design.md#workflow-definitions); absent for an agent of the definition.
     */
    agent_version?: number;
    /**
     * How `to_agent` was selected (docs/design.md#complexity-allocation-selection-and-review): strategy, role and
     * every candidate's score.
     */
    selection?: ResolvedAgent['selection'];
  };
  custom_span: { operation_name: string; metadata?: Record<string, unknown> };
}

export type SpanFields = SpanFieldsByType[SpanType];

export interface SpanRecord<T extends SpanType = SpanType> {
  /** `span_` + 24 hex, time-ordered (src/domain/ids.ts newSpanId). */
  spanId: string;
  traceId: string;
  workflowId: string;
  tenantId: string;
  /** The node the span belongs to, when it belongs to one. */
  nodeId: string | null;
  parentId: string | null;
  type: T;
  /** Epoch ms. */
  startedAt: number;
  endedAt: number | null;
  status: SpanStatus | null;
  error: ErrorInfo | null;
  fields: SpanFieldsByType[T];
}

/** What a commit does with a span: insert it (open or already ended) or close it. */
export type SpanWrite =
  | { op: 'insert'; span: SpanRecord }
  | {
      op: 'end';
      /** The span's workflow and its tenant: where the store files the end. */
      workflowId: string;
      tenantId: string;
      spanId: string;
      endedAt: number;
      status: SpanStatus;
      error?: ErrorInfo | null;
      /** Replaces fields known only at the end (e.g. tokens, success). */
      fields?: Partial<SpanFields>;
    };

export const SpanStatusSchema = z.enum(SPAN_STATUSES);
export const SpanTypeSchema = z.enum(SPAN_TYPES);

// ---------------------------------------------------------------------------------------------
// Reading spans back (added with the trace store, src/store/spans.repo.ts).

/**
 * The stored `fields` of each span type, checked when a span is read back. Loose: a key the
 * engine adds later survives the round trip instead of failing the whole trace.
 */
export const SPAN_FIELD_SCHEMAS = {
  agent_span: z.looseObject({
    agent_name: z.string(),
    instructions_hash: z.string().nullable().optional(),
    model: z.string().nullable().optional(),
  }),
  generation_span: z.looseObject({
    model: z.string(),
    tokens_in: z.number().describe('Tokens spent: 0 on a cache hit.'),
    tokens_out: z.number(),
    latency_ms: z.number(),
    cache_hit: z.boolean(),
    cache_key: z.string().nullable(),
    cost_usd: z.number(),
    tokens_saved_in: z.number().optional().describe('On a cache hit: the input tokens the original call spent.'),
    tokens_saved_out: z.number().optional(),
    cost_saved_usd: z.number().optional(),
    collapsed: z.boolean().optional().describe('A hit that waited on an identical call already in flight.'),
    simulated: z.boolean().optional().describe('sim/*: costs are what the call would have cost, not money.'),
  }),
  function_span: z.looseObject({
    function_name: z.string(),
    arguments: z.unknown(),
    result: z.unknown(),
    success: z.boolean(),
  }),
  guardrail_span: z.looseObject({ guardrail_name: z.string(), triggered: z.boolean(), blocking: z.boolean() }),
  handoff_span: z.looseObject({
    from_agent: z.string(),
    to_agent: z.string(),
    context_passed: z.unknown().optional(),
    agent_version: z.int().optional().describe('Registry version of to_agent; absent for an agent of the definition.'),
    selection: ResolvedAgentSchema.shape.selection.describe(
      "When to_agent was selected: role, strategy, task type, complexity and every candidate's score.",
    ),
  }),
  custom_span: z.looseObject({ operation_name: z.string(), metadata: z.record(z.string(), z.unknown()).optional() }),
} as const satisfies { [T in SpanType]: z.ZodType<SpanFieldsByType[T]> };

/** `active` until the trace's ROOT workflow is terminal (docs/design.md#events-spans-metrics-and-rewards). */
export const TRACE_STATUSES = ['active', 'completed'] as const;
export type TraceStatus = (typeof TRACE_STATUSES)[number];

/**
 * One trace: the root workflow and its child workflows (they share `traceId`). Times are epoch ms:
 * `startedAt` is the root workflow's submission (the input_validation guardrail runs then),
 * `endedAt` its end once terminal, else null.
 */
export interface TraceSummary {
  traceId: string;
  /** The root workflow. */
  workflowId: string;
  workflowName: string;
  /** The root workflow's correlationId. */
  groupId: string | null;
  status: TraceStatus;
  startedAt: number;
  endedAt: number | null;
  spanCount: number;
}

export interface TraceRecord extends Omit<TraceSummary, 'spanCount'> {
  /** In id order (creation order; ids are time-ordered). */
  spans: SpanRecord[];
}

export interface TraceFilter {
  /** Any workflow of the trace, root or child. */
  workflowId?: string;
  groupId?: string;
  status?: TraceStatus;
  /** Epoch ms, inclusive, on `startedAt`. */
  from?: number;
  /** Epoch ms, exclusive, on `startedAt`. */
  to?: number;
}

/** What the generation spans of one workflow add up to: calls made, tokens spent, money apart from sim. */
export interface GenerationUsage {
  workflowId: string;
  /** Generation spans that were not cache hits: logical provider calls (open ones included). */
  calls: number;
  tokensIn: number;
  tokensOut: number;
  costUsd: number;
  /** What sim/* calls would have cost at their tier price: not money. */
  simulatedCostUsd: number;
}
