import { describe, expect, it } from 'vitest';
import { boundedToolName, type LlmRequest, MAX_TOOL_NAME_CHARS } from '../../src/domain/llm.js';
import { DEFAULT_TENANT, useEngineHarness } from '../support/engine-harness.js';

/**
 * A tool name a model made up is stored cut to MAX_TOOL_NAME_CHARS with a marker
 * wherever it is kept — the tool_calls row (and so the analytics), the toolInvocation event, the
 * function_span — and the refusal the model reads names it cut. The provider adapters already
 * refuse a longer name as a bad response; this is the engine's bound for answers they never see
 * (a scripted provider here, a cached answer).
 */
const h = useEngineHarness();

const INVENTED = `invented_${'z'.repeat(20_000)}`;

function lastToolResult(request: LlmRequest): string {
  const last = request.messages.at(-1);
  const block = Array.isArray(last?.content) ? last.content.find((b) => b.type === 'tool_result') : undefined;
  return block && 'content' in block ? String(block.content) : '';
}

describe('an invented tool name', () => {
  it('is cut with a marker: short enough to keep, long enough to recognise', () => {
    expect(boundedToolName('inspect_current_node')).toBe('inspect_current_node');
    const cut = boundedToolName(INVENTED);
    expect(cut.length).toBeLessThanOrEqual(MAX_TOOL_NAME_CHARS);
    expect(cut).toMatch(/^invented_z+…\(20009 chars\)$/);
    // Never half a surrogate pair.
    const emoji = boundedToolName('😀'.repeat(100));
    expect(emoji).toMatch(/^(?:😀)+…\(200 chars\)$/u);
  });

  it('is stored and shown cut in the tool_calls row, the event, the span and the refusal', async () => {
    h.model.enqueue({ toolUse: { name: INVENTED } }, { text: 'done' });
    const id = await h.submit({
      name: 'invented',
      agents: { a: { model: 'script/sonnet', tools: ['inspect_current_node'] } },
      root: { type: 'prompt', name: 'p', agent: 'a', user: 'go' },
    });
    const { workflow, events } = await h.runUntilEnd(id);
    expect(workflow.status).toBe('completed');
    const cut = boundedToolName(INVENTED);

    const invocation = events.find((e) => e.type === 'toolInvocation');
    if (invocation?.type !== 'toolInvocation') throw new Error('no toolInvocation event');
    expect(invocation.payload.toolName).toBe(cut);
    expect(invocation.payload.isError).toBe(true);
    expect(JSON.stringify(invocation.payload).length).toBeLessThan(1_000);

    const trace = await h.deps.traces.trace(DEFAULT_TENANT, workflow.traceId);
    const span = trace?.spans.find((s) => s.type === 'function_span');
    expect(span?.fields).toMatchObject({ function_name: cut, success: false });
    expect(JSON.stringify(span).length).toBeLessThan(2_000);

    const sums = await h.deps.usage.toolCalls(DEFAULT_TENANT, { from: 0, to: Number.MAX_SAFE_INTEGER });
    const stored = JSON.stringify(sums);
    expect(stored).toContain(cut);
    expect(stored.length).toBeLessThan(2_000);

    const refusal = lastToolResult(h.model.calls[1]?.request as LlmRequest);
    expect(refusal).toContain(JSON.stringify(`tool "${cut}" is not available to this agent`));
    expect(refusal.length).toBeLessThan(1_000);
  });
});
