import { describe, expect, it } from 'vitest';
import { DEFAULT_TENANT, useEngineHarness } from '../support/engine-harness.js';

/**
 * A model-written tool input is stored (the toolInvocation event, the function_span's arguments) at
 * most MAX_TOOL_RESULT_BYTES, cut like a result: an 8 MB input was written whole twice (16 MB)
 * before the node failed with CONVERSATION_TOO_LARGE. The conversation itself keeps the model's
 * turn as it was (the provider must see what it said); MAX_CONVERSATION_BYTES bounds that.
 */
const h = useEngineHarness();

describe('a huge tool input', () => {
  it('is stored cut, with a note, in the event and the span', async () => {
    h.model.enqueue({ toolUse: { name: 'inspect_current_node', input: { blob: 'x'.repeat(8_000_000) } } });
    const id = await h.submit({
      name: 'huge-input',
      agents: { a: { model: 'script/sonnet', tools: ['inspect_current_node'] } },
      root: { type: 'prompt', name: 'p', agent: 'a', user: 'go' },
    });
    const { workflow, events } = await h.runUntilEnd(id);
    const invocation = events.find((e) => e.type === 'toolInvocation');
    if (invocation?.type !== 'toolInvocation') throw new Error(`no toolInvocation event (${workflow.status})`);
    const stored = JSON.stringify(invocation.payload.input);
    expect(stored.length).toBeLessThan(70_000);
    expect(stored).toContain('MAX_TOOL_RESULT_BYTES');

    const trace = await h.deps.traces.trace(DEFAULT_TENANT, workflow.traceId);
    const span = trace?.spans.find((s) => s.type === 'function_span');
    expect(JSON.stringify(span?.fields).length).toBeLessThan(140_000);
  });

  it('is stored whole below the cap', async () => {
    h.model.enqueue({ toolUse: { name: 'inspect_current_node', input: { note: 'small' } } }, { text: 'done' });
    const id = await h.submit({
      name: 'small-input',
      agents: { a: { model: 'script/sonnet', tools: ['inspect_current_node'] } },
      root: { type: 'prompt', name: 'p', agent: 'a', user: 'go' },
    });
    const { events } = await h.runUntilEnd(id);
    const invocation = events.find((e) => e.type === 'toolInvocation');
    if (invocation?.type !== 'toolInvocation') throw new Error('no toolInvocation event');
    expect(invocation.payload.input).toEqual({ note: 'small' });
  });
});
