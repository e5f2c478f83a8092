import { describe, expect, it } from 'vitest';
import {
  SpanViewSchema,
  TraceSummaryViewSchema,
  TraceViewSchema,
  toTraceSummaryView,
  toTraceView,
} from '../../../src/api/trace-view.js';
import type { SpanRecord, TraceRecord } from '../../../src/domain/spans.js';

const T0 = Date.UTC(2026, 0, 7, 10, 0, 0);

function span(id: string, parentId: string | null, startedAt: number, rest: Partial<SpanRecord> = {}): SpanRecord {
  return {
    spanId: id,
    traceId: 'trace_1',
    workflowId: 'wf_root',
    tenantId: 'acme',
    nodeId: null,
    parentId,
    type: 'custom_span',
    startedAt,
    endedAt: null,
    status: null,
    error: null,
    fields: { operation_name: id },
    ...rest,
  };
}

// Stored in id order; start order differs (span_4 started before span_3), and span_9's parent is missing.
const spans: SpanRecord[] = [
  span('span_1', null, T0, {
    type: 'agent_span',
    fields: { agent_name: 'orchestrator' },
    endedAt: T0 + 300_000,
    status: 'ok',
  }),
  span('span_2', 'span_1', T0 + 1, {
    type: 'guardrail_span',
    fields: { guardrail_name: 'input_validation', triggered: false, blocking: true },
    endedAt: T0 + 2,
    status: 'ok',
  }),
  span('span_3', 'span_1', T0 + 20, {
    type: 'handoff_span',
    fields: { from_agent: 'orchestrator', to_agent: 'backend-dev' },
    endedAt: T0 + 21,
    status: 'ok',
  }),
  span('span_4', 'span_1', T0 + 10, {
    type: 'generation_span',
    nodeId: 'nd_1',
    fields: {
      model: 'sim/sonnet',
      tokens_in: 100,
      tokens_out: 20,
      latency_ms: 250,
      cache_hit: false,
      cache_key: null,
      cost_usd: 0.001,
    },
    endedAt: T0 + 260,
    status: 'error',
    error: { code: 'PROVIDER_TIMEOUT', message: 'timed out' },
  }),
  span('span_5', 'span_4', T0 + 10, {
    type: 'function_span',
    fields: { function_name: 'read_file', arguments: { path: 'a.ts' }, result: 'x', success: true },
  }),
  span('span_9', 'span_missing', T0 + 5),
];

const trace: TraceRecord = {
  traceId: 'trace_1',
  workflowId: 'wf_root',
  workflowName: 'implement_feature',
  groupId: 'session_xyz789',
  status: 'active',
  startedAt: T0,
  endedAt: null,
  spans,
};

describe('toTraceView', () => {
  const own = { providerCalls: 2, tokensIn: 30, tokensOut: 7, costUsd: 0.5, simulatedCostUsd: 0.25 };
  const all = { providerCalls: 5, tokensIn: 90, tokensOut: 21, costUsd: 1, simulatedCostUsd: 0.75 };
  const view = toTraceView(trace, { durationMs: 1234, ...own, withChildren: all });

  it('carries the totals in snake_case: own, then with the child workflows', () => {
    expect(view.totals).toEqual({
      duration_ms: 1234,
      provider_calls: 2,
      tokens_in: 30,
      tokens_out: 7,
      cost_usd: 0.5,
      simulated_cost_usd: 0.25,
      with_children: { provider_calls: 5, tokens_in: 90, tokens_out: 21, cost_usd: 1, simulated_cost_usd: 0.75 },
    });
  });

  it('lists spans in start order (ties by id) with ISO-8601 Z times', () => {
    expect(view.spans.map((s) => s.span_id)).toEqual(['span_1', 'span_2', 'span_9', 'span_4', 'span_5', 'span_3']);
    expect(view.started_at).toBe('2026-01-07T10:00:00.000Z');
    expect(view.ended_at).toBeNull();
    expect(view.spans[0]).toMatchObject({
      started_at: '2026-01-07T10:00:00.000Z',
      ended_at: '2026-01-07T10:05:00.000Z',
    });
    expect(view.spans.find((s) => s.span_id === 'span_5')).toMatchObject({ ended_at: null, status: null });
  });

  it('derives children consistently with parent_id', () => {
    const byId = new Map(view.spans.map((s) => [s.span_id, s]));
    expect(byId.get('span_1')?.children).toEqual(['span_2', 'span_4', 'span_3']);
    expect(byId.get('span_4')?.children).toEqual(['span_5']);
    for (const s of view.spans) {
      for (const child of s.children) expect(byId.get(child)?.parent_id).toBe(s.span_id);
      if (s.parent_id !== null && byId.has(s.parent_id)) expect(byId.get(s.parent_id)?.children).toContain(s.span_id);
    }
    // A span whose parent is not in the trace keeps its parent_id and is nobody's child.
    expect(byId.get('span_9')?.parent_id).toBe('span_missing');
    expect(view.spans.flatMap((s) => s.children)).not.toContain('span_9');
  });

  it('puts the type fields inline, and error only when there is one', () => {
    const gen = view.spans.find((s) => s.span_id === 'span_4');
    expect(gen).toEqual({
      span_id: 'span_4',
      parent_id: 'span_1',
      type: 'generation_span',
      model: 'sim/sonnet',
      tokens_in: 100,
      tokens_out: 20,
      latency_ms: 250,
      cache_hit: false,
      cache_key: null,
      cost_usd: 0.001,
      started_at: '2026-01-07T10:00:00.010Z',
      ended_at: '2026-01-07T10:00:00.260Z',
      status: 'error',
      error: { code: 'PROVIDER_TIMEOUT', message: 'timed out' },
      children: ['span_5'],
      workflow_id: 'wf_root',
      node_id: 'nd_1',
    });
    expect(view.spans[0]).not.toHaveProperty('error');
    expect(view.spans[0]).toMatchObject({ agent_name: 'orchestrator', type: 'agent_span' });
  });

  it('matches the seed header and survives the response schema unchanged (nothing stripped)', () => {
    expect(view).toMatchObject({
      trace_id: 'trace_1',
      workflow_id: 'wf_root',
      workflow_name: 'implement_feature',
      group_id: 'session_xyz789',
      status: 'active',
    });
    expect(TraceViewSchema.parse(view)).toEqual(view);
    expect(JSON.stringify(TraceViewSchema.parse(view))).toBe(JSON.stringify(view));
    for (const s of view.spans) expect(SpanViewSchema.safeParse(s).success).toBe(true);
  });
});

describe('toTraceSummaryView', () => {
  it('is the header plus span_count', () => {
    const { spans: _, ...rest } = trace;
    const summary = toTraceSummaryView({ ...rest, status: 'completed', endedAt: T0 + 1000, spanCount: 6 });
    expect(summary).toEqual({
      trace_id: 'trace_1',
      workflow_id: 'wf_root',
      workflow_name: 'implement_feature',
      group_id: 'session_xyz789',
      status: 'completed',
      started_at: '2026-01-07T10:00:00.000Z',
      ended_at: '2026-01-07T10:00:01.000Z',
      span_count: 6,
    });
    expect(TraceSummaryViewSchema.parse(summary)).toEqual(summary);
  });
});
