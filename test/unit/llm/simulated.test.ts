import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { type LlmRequest, responseText } from '../../../src/domain/llm.js';
import { createSimulatedProvider } from '../../../src/llm/simulated.js';
import { countingClock, createManualClock } from '../../support/manual-clock.js';

/*
 * What only the sim does: its unscripted answers, its scripts and its latency. What it shares with
 * every LlmProvider (answers, error kinds, aborts) is test/contracts/llm-provider.contract.test.ts.
 */

const signal = new AbortController().signal;

function request(overrides: Partial<LlmRequest> = {}): LlmRequest {
  return {
    model: 'sonnet',
    system: 'You review code for bugs.',
    messages: [{ role: 'user', content: 'Analyze this code for bugs' }],
    maxTokens: 1024,
    ...overrides,
  };
}

describe('sim provider: unscripted answers', () => {
  it('answers a labelled, deterministic text derived from the last user message', async () => {
    const clock = countingClock();
    const sim = createSimulatedProvider({ clock });
    const first = await sim.complete(request(), { signal });
    const second = await sim.complete(request(), { signal });
    expect(responseText(first)).toBe('[simulated sonnet] Analyze this code for bugs');
    expect(first.content).toEqual(second.content);
    expect(first.stopReason).toBe('end_turn');
    expect(first.simulated).toBe(true);
    expect(first.model).toBe('sonnet');
    expect(first.requestId).toMatch(/^sim_/);
    expect(first.requestId).not.toBe(second.requestId);
    expect(clock.sleeps).toEqual([]);
  });

  it('keeps the snippet to ~120 characters on one line and reads text blocks and tool results', async () => {
    const sim = createSimulatedProvider({ clock: countingClock() });
    const long = await sim.complete(request({ messages: [{ role: 'user', content: `a\n${'x'.repeat(500)}` }] }), {
      signal,
    });
    expect(responseText(long)).toBe(`[simulated sonnet] a ${'x'.repeat(118)}`);
    const toolTurn = await sim.complete(
      request({
        messages: [
          { role: 'user', content: 'first' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'retrieve', input: { q: 'x' } }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'found it' }] },
        ],
      }),
      { signal },
    );
    expect(responseText(toolTurn)).toBe('[simulated sonnet] found it');
  });

  it('answers a valid instance of responseFormat (docs/design.md#workflow-definitions quick start)', async () => {
    const schema = {
      type: 'object',
      required: ['bugs', 'severity'],
      properties: { bugs: { type: 'array', items: { type: 'string' } }, severity: { enum: ['low', 'medium', 'high'] } },
    };
    const sim = createSimulatedProvider({ clock: countingClock() });
    const response = await sim.complete(request({ responseFormat: schema }), { signal });
    const parsed: unknown = JSON.parse(responseText(response));
    expect(new Ajv().validate(schema, parsed)).toBe(true);
    expect(parsed).toEqual({ bugs: ['simulated'], severity: 'low' });
  });

  it('estimates usage from text length, at least one token each way', async () => {
    const sim = createSimulatedProvider({ clock: countingClock() });
    const response = await sim.complete(
      request({ system: 'x'.repeat(10), messages: [{ role: 'user', content: 'y'.repeat(7) }] }),
      {
        signal,
      },
    );
    expect(response.usage.inputTokens).toBe(Math.ceil(17 / 4));
    expect(response.usage.outputTokens).toBe(Math.ceil(responseText(response).length / 4));
    const empty = await sim.complete(request({ system: undefined, messages: [], responseFormat: { type: 'null' } }), {
      signal,
    });
    expect(empty.usage).toEqual({ inputTokens: 1, outputTokens: 1 });
  });
});

describe('sim provider: scripts', () => {
  it('consumes responses in order per scriptKey, then falls back to the default answer', async () => {
    const sim = createSimulatedProvider({ clock: countingClock() });
    const simulate = {
      scriptKey: 'wf1/find-bugs',
      responses: [
        { text: 'one' },
        { json: { bugs: [], severity: 'low' } },
        { toolUse: { name: 'retrieve', input: { q: 'a' } } },
      ],
    };
    const other = { scriptKey: 'wf1/fix-a', responses: [{ text: 'other' }] };
    const texts: string[] = [];
    texts.push(responseText(await sim.complete(request({ simulate }), { signal })));
    texts.push(responseText(await sim.complete(request({ simulate: other }), { signal })));
    texts.push(responseText(await sim.complete(request({ simulate }), { signal })));
    expect(texts).toEqual(['one', 'other', '{"bugs":[],"severity":"low"}']);

    const toolTurn = await sim.complete(request({ simulate }), { signal });
    expect(toolTurn.stopReason).toBe('tool_use');
    expect(toolTurn.content).toEqual([
      { type: 'tool_use', id: expect.stringMatching(/^toolu_sim_/), name: 'retrieve', input: { q: 'a' } },
    ]);
    const after = await sim.complete(request({ simulate }), { signal });
    expect(responseText(after)).toBe('[simulated sonnet] Analyze this code for bugs');
  });
});

describe('sim provider: latency and abort', () => {
  it('waits latencyMs on the clock before answering', async () => {
    const clock = createManualClock();
    const sim = createSimulatedProvider({ clock });
    let answered = false;
    const answer = sim.complete(request({ simulate: { scriptKey: 'slow', latencyMs: 30 } }), { signal }).then((r) => {
      answered = true;
      return r;
    });
    await clock.advance(29);
    expect(answered).toBe(false);
    await clock.advance(1);
    expect(answered).toBe(true);
    expect(responseText(await answer)).toMatch(/^\[simulated sonnet\]/);
    expect(clock.history.map((sleep) => sleep.ms)).toEqual([30]);
  });

  it('rejects with the signal reason when aborted during the latency, without consuming the script', async () => {
    const clock = createManualClock();
    const sim = createSimulatedProvider({ clock });
    const controller = new AbortController();
    const reason = new Error('node timeout');
    const simulate = { scriptKey: 'abort', latencyMs: 10_000, responses: [{ text: 'first' }] };
    const pending = sim.complete(request({ simulate }), { signal: controller.signal });
    // Aborted while its latency is asleep on the clock (which never moves here).
    expect(clock.pending.map((sleep) => sleep.ms)).toEqual([10_000]);
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    expect(clock.pending).toEqual([]);
    const next = await sim.complete(request({ simulate: { ...simulate, latencyMs: 0 } }), { signal });
    expect(responseText(next)).toBe('first');
  });
});
