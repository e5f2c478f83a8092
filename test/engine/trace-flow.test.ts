import { describe, expect, it } from 'vitest';
import { submit } from '../support/api-fixtures.js';
import { useAnthropicTestApp, waitForStatus } from '../support/build-app.js';
import { type RecordedRequest, textMessage, toolUseMessage } from '../support/fake-anthropic.js';

/**
 * One trace, asserted whole (docs/design.md#events-spans-metrics-and-rewards): a parallel branch, a tool loop, a
 * prompt-level reflection
 * and a cache hit, on the real Anthropic SDK against a fake that answers by content and reports
 * distinct token usage per answer, so token sums can be checked against what the provider said.
 */
const served = { input: 0, output: 0, calls: 0 };

function lastUserText(request: RecordedRequest): string {
  const messages = (request.body as { messages: Array<{ role: string; content: unknown }> }).messages;
  return JSON.stringify(messages[0]?.content ?? '');
}

function answer(request: RecordedRequest) {
  const messages = (request.body as { messages: unknown[] }).messages;
  const text = lastUserText(request);
  let reply: ReturnType<typeof textMessage>;
  if (text.includes('Say hi')) reply = textMessage('hi', { input_tokens: 11, output_tokens: 3 });
  else if (text.includes('Use the tool')) {
    reply =
      messages.length === 1
        ? toolUseMessage('inspect_current_node', {}, { input_tokens: 20, output_tokens: 7 })
        : textMessage('done', { input_tokens: 31, output_tokens: 5 });
  } else if (text.includes('Rate it')) {
    reply =
      messages.length === 1
        ? textMessage('{"severity": "extreme"}', { input_tokens: 40, output_tokens: 9 })
        : textMessage('{"severity": "low"}', { input_tokens: 55, output_tokens: 8 });
  } else reply = textMessage('?', { input_tokens: 1, output_tokens: 1 });
  served.input += reply.usage.input_tokens;
  served.output += reply.usage.output_tokens;
  served.calls += 1;
  return { body: reply };
}

const app = useAnthropicTestApp({ defaultReply: answer });

interface SpanJson {
  span_id: string;
  parent_id: string | null;
  type: string;
  status: string | null;
  started_at: string;
  ended_at: string | null;
  children: string[];
  [field: string]: unknown;
}

describe('GET /v1/traces/{traceId}', () => {
  it('records the whole run as one consistent span tree', async () => {
    const res = await submit(app.t.app, {
      name: 'traced',
      correlationId: 'trace-session-1',
      agents: { a: { model: 'anthropic/claude-sonnet-5-5', tools: ['inspect_current_node'] } },
      root: {
        type: 'sequence',
        name: 'main',
        steps: [
          { type: 'prompt', name: 'warm', agent: 'a', user: 'Say hi' },
          {
            type: 'parallel',
            name: 'fan-out',
            steps: [
              { type: 'prompt', name: 'tooling', agent: 'a', user: 'Use the tool' },
              {
                type: 'prompt',
                name: 'rate',
                agent: 'a',
                user: 'Rate it',
                enableReflection: true,
                responseFormat: {
                  type: 'object',
                  required: ['severity'],
                  properties: { severity: { enum: ['low', 'high'] } },
                },
              },
              { type: 'prompt', name: 'warm-again', agent: 'a', user: 'Say hi' },
            ],
          },
        ],
      },
    });
    expect(res.statusCode).toBe(202);
    const { id, traceId } = res.json();
    const done = await waitForStatus(app.t.app, id);
    expect(done.status).toBe('completed');

    const traceRes = await app.t.app.inject({ method: 'GET', url: `/v1/traces/${traceId}` });
    expect(traceRes.statusCode).toBe(200);
    const trace = traceRes.json() as { trace_id: string; group_id: string; status: string; spans: SpanJson[] };
    expect(trace).toMatchObject({ trace_id: traceId, group_id: 'trace-session-1', status: 'completed' });
    const spans = trace.spans;
    const byId = new Map(spans.map((s) => [s.span_id, s]));

    // Counts per type (docs/design.md#events-spans-metrics-and-rewards mapping).
    const count = (type: string, where: (s: SpanJson) => boolean = () => true) =>
      spans.filter((s) => s.type === type && where(s)).length;
    expect(count('agent_span')).toBe(5); // orchestrator + 4 prompt nodes
    expect(count('agent_span', (s) => s.agent_name === 'orchestrator' && s.parent_id === null)).toBe(1);
    expect(count('handoff_span')).toBe(4);
    expect(count('generation_span')).toBe(6); // warm 1, tooling 2, rate 2, warm-again 1 (cache hit)
    expect(count('generation_span', (s) => s.cache_hit === true)).toBe(1);
    expect(count('function_span', (s) => s.function_name === 'inspect_current_node' && s.success === true)).toBe(1);
    expect(count('guardrail_span', (s) => s.guardrail_name === 'input_validation')).toBe(1);
    expect(count('guardrail_span', (s) => s.guardrail_name === 'response_format')).toBe(2);
    expect(count('guardrail_span', (s) => s.guardrail_name === 'response_format' && s.triggered === true)).toBe(1);
    expect(count('custom_span', (s) => s.operation_name === 'sequence')).toBe(1);
    expect(count('custom_span', (s) => s.operation_name === 'parallel')).toBe(1);
    expect(count('custom_span', (s) => s.operation_name === 'reflection')).toBe(1);

    // Parent links: one root, every other parent exists, children derived consistently, all closed.
    expect(spans.filter((s) => s.parent_id === null)).toHaveLength(1);
    for (const span of spans) {
      expect(span.status).not.toBeNull();
      expect(span.ended_at).not.toBeNull();
      if (span.parent_id !== null) expect(byId.get(span.parent_id)?.children).toContain(span.span_id);
      for (const child of span.children) expect(byId.get(child)?.parent_id).toBe(span.span_id);
    }
    // Generations hang under the agent_span of their node; tools too.
    for (const span of spans.filter((s) => s.type === 'generation_span' || s.type === 'function_span')) {
      expect(byId.get(span.parent_id ?? '')?.type).toBe('agent_span');
    }

    // Token sums equal what the provider reported (the cache hit made no call).
    const calls = spans.filter((s) => s.type === 'generation_span' && s.cache_hit === false);
    expect(calls).toHaveLength(served.calls);
    expect(app.fake.requests).toHaveLength(served.calls);
    expect(calls.reduce((sum, s) => sum + Number(s.tokens_in), 0)).toBe(served.input);
    expect(calls.reduce((sum, s) => sum + Number(s.tokens_out), 0)).toBe(served.output);
    // A hit spends nothing, so summing every generation span gives the tokens spent; what the hit
    // saved is its own field.
    const generations = spans.filter((s) => s.type === 'generation_span');
    expect(generations.reduce((sum, s) => sum + Number(s.tokens_in), 0)).toBe(served.input);
    const hit = spans.find((s) => s.cache_hit === true);
    expect(hit).toMatchObject({ tokens_in: 0, tokens_out: 0, cost_usd: 0, tokens_saved_in: 11, tokens_saved_out: 3 });
    expect(typeof hit?.cache_key).toBe('string');

    // The efficiency record agrees with the trace.
    const metrics = (await app.t.app.inject({ method: 'GET', url: `/v1/workflows/${id}/metrics` })).json();
    expect(metrics.efficiency.metrics).toMatchObject({
      total_agent_calls: served.calls,
      cache_hits: 1,
      retry_count: 1,
      retry_reasons: ['test_failure'],
      recovery_rate: 1,
    });
    expect(metrics.efficiency).toMatchObject({ outcome: 'success', outcome_reason: 'tests_passed_after_fix' });
    expect(metrics.efficiency.efficiency_factors).toContain('cached_result');
    expect(metrics.efficiency.quality_pillars).toMatchObject({
      tool_reliability_rate: 1,
      tool_selection_correct: true,
    });

    const listed = (await app.t.app.inject({ method: 'GET', url: '/v1/traces?groupId=trace-session-1' })).json();
    expect(listed.items.map((item: { trace_id: string }) => item.trace_id)).toEqual([traceId]);
  });
});
