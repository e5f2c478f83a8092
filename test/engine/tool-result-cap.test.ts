import { describe, expect, it } from 'vitest';
import type { LlmRequest } from '../../src/domain/llm.js';
import { asData, dataOutput } from '../../src/tools/tool-output.js';
import { DEFAULT_TENANT, useEngineHarness } from '../support/engine-harness.js';

/**
 * One tool result is at most MAX_TOOL_RESULT_BYTES, and the cut result is what the
 * model, the toolInvocation event and the function_span all get; a node's conversation is at most
 * MAX_CONVERSATION_BYTES, past which the node fails with CONVERSATION_TOO_LARGE before the request
 * that would carry it is sent.
 */
const h = useEngineHarness({ env: { MAX_TOOL_RESULT_BYTES: '2048', MAX_CONVERSATION_BYTES: '65536' } });

function lastToolResult(request: LlmRequest): string {
  const last = request.messages.at(-1);
  const block = Array.isArray(last?.content) ? last.content.find((b) => b.type === 'tool_result') : undefined;
  return block && 'content' in block ? String(block.content) : '';
}

const writerThenReader = (turns: number) => ({
  name: 'cap',
  agents: { a: { model: 'script/sonnet', tools: ['inspect_prior_outputs'] } },
  root: {
    type: 'sequence',
    name: 'main',
    steps: [
      { type: 'prompt', name: 'writer', agent: 'a', user: 'write' },
      { type: 'prompt', name: 'reader', agent: 'a', user: 'read', maxTurns: turns + 1 },
    ],
  },
});

describe('tool result cap', () => {
  it('a result over MAX_TOOL_RESULT_BYTES reaches the model, the event and the span cut, the cut noted', async () => {
    const written = 'é'.repeat(10_000); // 20 000 bytes of UTF-8
    h.model.enqueue(
      { text: written },
      { toolUse: { name: 'inspect_prior_outputs' } },
      { text: 'read it', when: (request) => lastToolResult(request).includes('"cut"') },
    );
    const id = await h.submit(writerThenReader(1));
    const { workflow, events } = await h.runUntilEnd(id);
    expect(workflow.status).toBe('completed');

    const seen = lastToolResult(h.model.calls[2]?.request as LlmRequest);
    expect(Buffer.byteLength(seen)).toBeLessThanOrEqual(2048);
    const invocation = events.find((e) => e.type === 'toolInvocation');
    if (invocation?.type !== 'toolInvocation') throw new Error('no toolInvocation event');
    const output = invocation.payload.output as { cut: string; partial: { outputs: Array<{ output: string }> } };
    expect(output.cut).toMatch(/^the first [\d,]+ of about [\d,]+ bytes of the result \(MAX_TOOL_RESULT_BYTES\)$/);
    expect(Number(/about ([\d,]+) bytes/.exec(output.cut)?.[1]?.replaceAll(',', ''))).toBeGreaterThan(20_000);
    // The same shape, cut short: the writer's output is the string where the room ran out.
    const kept = output.partial.outputs[0]?.output ?? '';
    expect(kept.length).toBeGreaterThan(100);
    expect(written.startsWith(kept)).toBe(true);
    expect(seen).toBe(asData('inspect_prior_outputs', output));

    const trace = await h.deps.traces.trace(DEFAULT_TENANT, workflow.traceId);
    const span = trace?.spans.find((s) => s.type === 'function_span');
    expect(span?.fields).toMatchObject({ function_name: 'inspect_prior_outputs', success: true, result: output });
  });

  it('a conversation past MAX_CONVERSATION_BYTES fails the node before the next request is sent', async () => {
    h.model.enqueue({ text: 'x'.repeat(10_000) });
    // 2 KiB results: the 64 KiB conversation is full after about 32 of them.
    for (let i = 0; i < 40; i++) h.model.enqueue({ toolUse: { name: 'inspect_prior_outputs' } });
    const id = await h.submit(writerThenReader(45));
    const { workflow } = await h.runUntilEnd(id);
    expect(workflow.status).toBe('failed');
    expect(workflow.error?.code).toBe('CONVERSATION_TOO_LARGE');
    expect(workflow.error?.message).toMatch(
      /^node "reader": its conversation reached \d+ bytes; .*MAX_CONVERSATION_BYTES/,
    );
    // The largest request sent stayed under the limit.
    const sent = h.model.calls.map((call) => Buffer.byteLength(JSON.stringify(call.request.messages)));
    expect(Math.max(...sent)).toBeLessThan(65_536 + 8_192);
    const used = h.model.calls.length;
    expect(used).toBeGreaterThan(20);
    expect(used).toBeLessThan(41);
    h.model.discardRemaining();
  });
});

describe('dataOutput', () => {
  it('redacts the string it cuts whole, so no cut leaves the start of a secret', () => {
    const key = `sk-ant-${'a1B2'.repeat(10)}`;
    for (let at = 0; at < 60; at += 7) {
      const cut = dataOutput('t', { text: `${'x'.repeat(900 + at)} ${key} ${'y'.repeat(2000)}` }, 1024);
      expect(cut.content).not.toContain('a1B2a1B2');
    }
  });

  it('returns an output within the cap as it is', () => {
    const output = { a: 'b' };
    expect(dataOutput('t', output, 1024)).toEqual({ content: asData('t', output), output });
  });

  it('never splits a character, and fits the cap whatever the escaping costs', () => {
    for (const text of ['😀'.repeat(5_000), '"<\\'.repeat(5_000), '\u0001'.repeat(5_000), '<'.repeat(300)]) {
      const cut = dataOutput('t', { text }, 1024);
      expect(Buffer.byteLength(cut.content)).toBeLessThanOrEqual(1024);
      const { partial } = cut.output as { partial: { text: string } };
      expect(text.startsWith(partial.text)).toBe(true);
      expect(partial.text).not.toMatch(/[\uD800-\uDBFF]$/);
    }
  });
});
