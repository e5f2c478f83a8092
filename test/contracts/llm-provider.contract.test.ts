import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { responseText, type StopReason } from '../../src/domain/llm.js';
import { waitUntil } from '../support/api-fixtures.js';
import { providerFailure } from '../support/provider-failure.js';
import { anthropic, openai } from './llm-provider-adapters.js';
import { type Harness, type ProviderAdapter, type Reply, retrieveTool, toolTurns } from './llm-provider-harness.js';
import { httpContract } from './llm-provider-http.js';
import { sim } from './llm-provider-sim.js';

/**
 * The LlmProvider contract (src/domain/ports.ts), one spec run against every adapter: the real
 * @anthropic-ai/sdk against the fake Anthropic API, the OpenAI-compatible adapter against the fake
 * OpenAI server, and the embedded sim. It proves each of them maps an answer (text, tool calls,
 * usage, ids, stop reasons) into the provider-neutral shape, turns every HTTP failure into the same
 * ProviderError kind (docs/design.md#transport-retries), never retries inside the adapter, and hands
 * an abort back as the caller's own reason. The HTTP adapters' wire format, bad bodies and transport
 * failures follow in llm-provider-http.ts; where a dialect differs, the adapter
 * (llm-provider-adapters.ts, llm-provider-sim.ts) says how, and the same assertion runs.
 */

const signal = new AbortController().signal;

/** One row per HTTP failure class: the ProviderError every adapter must turn it into. */
const ERRORS = [
  {
    status: 429,
    message: 'Number of requests has exceeded your rate limit',
    retryAfterMs: 250,
    kind: 'rate_limit',
    code: 'LLM_RATE_LIMIT',
    retryable: true,
  },
  { status: 429, message: 'You exceeded your current quota', kind: 'quota', code: 'LLM_QUOTA', retryable: false },
  { status: 529, message: 'Overloaded', kind: 'overloaded', code: 'LLM_OVERLOADED', retryable: true },
  { status: 503, message: 'Service unavailable', kind: 'overloaded', code: 'LLM_OVERLOADED', retryable: true },
  { status: 504, message: 'Gateway timeout', kind: 'timeout', code: 'LLM_TIMEOUT', retryable: true },
  { status: 500, message: 'Internal server error', kind: 'server', code: 'LLM_SERVER_ERROR', retryable: true },
  { status: 401, message: 'invalid x-api-key', kind: 'authentication', code: 'LLM_AUTHENTICATION', retryable: false },
  { status: 403, message: 'not allowed', kind: 'permission', code: 'LLM_PERMISSION', retryable: false },
  {
    status: 400,
    message: 'Your credit balance is too low to access the Anthropic API.',
    kind: 'quota',
    code: 'LLM_QUOTA',
    retryable: false,
  },
  {
    status: 400,
    message: 'messages: field required',
    kind: 'invalid_request',
    code: 'LLM_INVALID_REQUEST',
    retryable: false,
  },
] as const;

function providerContract<Native>(adapter: ProviderAdapter<Native>): void {
  describe(`LlmProvider contract: ${adapter.name}`, () => {
    let h: Harness<Native>;
    beforeAll(async () => {
      h = await adapter.start();
    });
    afterAll(async () => {
      await h.close();
    });
    beforeEach(() => h.reset());

    it('maps a text answer, its usage, its model and its id', async () => {
      h.answer(adapter.usage.reply, { text: 'again' });
      const response = await h.provider.complete(h.request({ stop: ['END'] }), { signal });
      expect(responseText(response)).toBe('No bugs found.');
      expect(response.stopReason).toBe('end_turn');
      expect(response.usage).toEqual(adapter.usage.expected);
      expect(response.model).toBe(adapter.model);
      expect(response.requestId).toMatch(adapter.requestId);
      const second = await h.provider.complete(h.request(), { signal });
      expect(second.requestId).toMatch(adapter.requestId);
      expect(second.requestId).not.toBe(response.requestId);
      expect(h.reached()).toBe(2);
    });

    it('maps a tool_use answer, then takes the call and its result back as turns', async () => {
      h.answer({ toolUse: { name: 'retrieve', input: { query: 'retries' } } }, { text: 'done' });
      const first = await h.provider.complete(h.request({ tools: [retrieveTool] }), { signal });
      expect(first.stopReason).toBe('tool_use');
      const [call] = first.content;
      expect(first.content).toEqual([
        {
          type: 'tool_use',
          id: expect.stringMatching(adapter.toolUseId),
          name: 'retrieve',
          input: { query: 'retries' },
        },
      ]);
      if (call?.type !== 'tool_use') throw new Error('expected a tool call');
      const second = await h.provider.complete(h.request({ tools: [retrieveTool], messages: toolTurns(call) }), {
        signal,
      });
      expect(responseText(second)).toBe('done');
      expect(second.stopReason).toBe('end_turn');
      expect(h.reached()).toBe(2);
    });

    it('gives every tool_use a unique id', async () => {
      const toolUse = { toolUse: { name: 'retrieve', input: {} } };
      h.answer(toolUse, toolUse, toolUse);
      const ids = new Set<string>();
      for (let i = 0; i < 3; i++) {
        const [block] = (await h.provider.complete(h.request(), { signal })).content;
        if (block?.type === 'tool_use') ids.add(block.id);
      }
      expect(ids.size).toBe(3);
    });

    const stopReasons: Array<[string, Reply | { native: Native }, StopReason]> = [
      ['a text answer', { text: 'fine' }, 'end_turn'],
      ['a tool call', { toolUse: { name: 'retrieve', input: { query: 'x' } } }, 'tool_use'],
      ...adapter.stopReasons,
    ];
    it.each(stopReasons.map(([label, reply, stop]) => [label, stop, reply] as const))(
      '%s → stop reason %s',
      async (_, stopReason, reply) => {
        h.answer(reply);
        expect((await h.provider.complete(h.request({ tools: [retrieveTool] }), { signal })).stopReason).toBe(
          stopReason,
        );
      },
    );

    if (adapter.dialectAnswers.length > 0) {
      it.each(adapter.dialectAnswers)('maps %s', async (_, reply, content) => {
        h.answer(reply);
        expect((await h.provider.complete(h.request({ tools: [retrieveTool] }), { signal })).content).toEqual(content);
      });
    }

    it.each(ERRORS)('HTTP $status $message → $kind, not retried by the adapter', async (row) => {
      const retryAfterMs = 'retryAfterMs' in row ? row.retryAfterMs : undefined;
      h.answer({ error: { status: row.status, message: row.message, retryAfterMs } }, { text: 'recovered' });
      const err = await providerFailure(h.provider.complete(h.request(), { signal }));
      expect(err.kind).toBe(row.kind);
      expect(err.code).toBe(row.code);
      expect(err.retryable).toBe(row.retryable);
      expect(err.httpStatus).toBe(row.status);
      expect(err.retryAfterMs).toBe(retryAfterMs);
      expect(err.message).toContain(row.message);
      expect(h.reached()).toBe(1);
      // The caller's retry gets the next answer: the adapter consumed exactly one.
      expect(responseText(await h.provider.complete(h.request(), { signal }))).toBe('recovered');
      expect(h.reached()).toBe(2);
    });

    it('an abort during a pending call rethrows the signal reason unchanged', async () => {
      h.answer({ hang: true });
      const controller = new AbortController();
      const reason = new Error('node deadline');
      const pending = h.provider.complete(h.request(), { signal: controller.signal });
      // Aborted once the backend holds the call (not after a guessed delay).
      await waitUntil(() => h.reached() === 1, 'the call to reach the backend');
      controller.abort(reason);
      await expect(pending).rejects.toBe(reason);
      expect(h.reached()).toBe(1);
    });

    it('an already aborted signal throws its reason without a call', async () => {
      const reason = new Error('cancelled');
      await expect(h.provider.complete(h.request(), { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
      expect(h.reached()).toBe(0);
    });

    it(`temperature is ${adapter.temperature}`, async () => {
      if (adapter.temperature !== 'refused') h.answer({ text: 'warm' });
      const call = h.provider.complete(h.request({ temperature: 0.2 }), { signal });
      if (adapter.temperature === 'refused') {
        // Refused with a clear message rather than silently dropped, and before any request.
        const err = await providerFailure(call);
        expect(err.kind).toBe('invalid_request');
        expect(err.message).toContain('temperature');
        expect(h.reached()).toBe(0);
        return;
      }
      expect(responseText(await call)).toBe('warm');
      if (adapter.temperature === 'sent') expect(h.fake?.requests[0]?.body).toMatchObject({ temperature: 0.2 });
    });

    it('answers a large maxTokens without demanding streaming (the signal is the deadline)', async () => {
      h.answer({ text: 'ok' });
      expect(responseText(await h.provider.complete(h.request({ maxTokens: 64_000 }), { signal }))).toBe('ok');
    });

    if (adapter.http) httpContract(adapter.http, () => h);
  });
}

providerContract(anthropic);
providerContract(openai);
providerContract(sim);
