import { describe, expect, it } from 'vitest';
import { MAX_TOOL_NAME_CHARS, MAX_TOOL_USE_ID_CHARS, responseText } from '../../src/domain/llm.js';
import { waitUntil } from '../support/api-fixtures.js';
import type { FakeReply, FakeServer } from '../support/fake-anthropic.js';
import { providerFailure } from '../support/provider-failure.js';
import { createGate } from '../support/scripted-model.js';
import { type Harness, type HttpSide, retrieveTool, toolTurns } from './llm-provider-harness.js';

/**
 * The part of the LlmProvider contract only an adapter that speaks HTTP has: what it sends, the
 * retry hints it reads, the credentials it never repeats, the 2xx bodies it refuses as bad
 * responses (LLM_BAD_RESPONSE, retryable), the broken transports it reports as connection failures,
 * and the bounds it puts on what a provider may answer (error messages, tool names and ids).
 */

const signal = new AbortController().signal;
const HUGE = `start ${'x'.repeat(1_000_000)} end`;
const LONG_NAME = `deploy_${'A'.repeat(1_000_000)}`;

/** 2xx bodies no dialect can use. */
const COMMON_BAD_BODIES: Array<[string, FakeReply]> = [
  ['invalid JSON', { raw: '{"id": "x_1", "content": [' }],
  ['an empty body', { raw: '' }],
  ['{}', { body: {} }],
  ['a text/plain body', { raw: 'upstream says hi', headers: { 'content-type': 'text/plain' } }],
];

export function httpContract<Native>(side: HttpSide, harness: () => Harness<Native>): void {
  const fake = (): FakeServer => {
    const server = harness().fake;
    if (!server) throw new Error('an HTTP adapter has a fake server');
    return server;
  };
  const complete = (overrides = {}) => harness().provider.complete(harness().request(overrides), { signal });

  describe('over HTTP: what it sends', () => {
    it('sends the request in its dialect: method, path, headers and body', async () => {
      await complete({ stop: ['END'] });
      expect(fake().requests).toHaveLength(1);
      const sent = fake().requests[0]!;
      expect(sent.method).toBe(side.textWire.method);
      expect(sent.path).toBe(side.textWire.path);
      for (const [name, value] of Object.entries(side.textWire.headers)) expect(sent.headers[name], name).toBe(value);
      expect(sent.body).toEqual(side.textWire.body);
    });

    it.each(side.variants)('$label', async (variant) => {
      fake().enqueue(side.reply({ text: 'local' }));
      const provider = variant.make(fake().url);
      const response = await provider.complete(harness().request(variant.overrides), { signal });
      expect(responseText(response)).toBe('local');
      const sent = fake().requests[0]!;
      expect(sent.path).toBe(variant.path);
      for (const [name, value] of Object.entries(variant.headers)) expect(sent.headers[name], name).toBe(value);
      const body = sent.body as Record<string, unknown>;
      expect(body.messages).toEqual(variant.messages);
      for (const key of variant.bodyLacks) expect(body, key).not.toHaveProperty(key);
    });

    it('sends the tools and the tool turns in its dialect', async () => {
      fake().enqueue(side.reply({ toolUse: { name: 'retrieve', input: { query: 'retries' } } }));
      const first = await complete({ tools: [retrieveTool] });
      const [call] = first.content;
      if (call?.type !== 'tool_use') throw new Error('expected a tool call');
      const messages = toolTurns(call);
      await complete({ tools: [retrieveTool], messages });
      const [firstSent, secondSent] = fake().requests.map((request) => request.body as Record<string, unknown>);
      expect(firstSent?.tools).toEqual(side.toolsWire([retrieveTool]));
      expect(secondSent?.messages).toEqual(side.turnsWire(messages, call.id));
    });

    it('answers by content with a reply function (the fake sees what was sent)', async () => {
      fake().enqueue((request) => side.reply({ text: `echo ${(request.body as { model: string }).model}` }));
      expect(responseText(await complete())).toBe(`echo ${harness().request().model}`);
    });
  });

  describe('over HTTP: failures', () => {
    it.each([
      [529, 'overloaded', '2', 2000],
      [429, 'rate_limit', '3', 3000],
    ] as const)('%i with only retry-after (seconds) → %s after %s s', async (status, kind, seconds, ms) => {
      fake().enqueue({ ...side.reply({ error: { status, message: 'wait' } }), headers: { 'retry-after': seconds } });
      const err = await providerFailure(complete());
      expect(err.kind).toBe(kind);
      expect(err.retryAfterMs).toBe(ms);
      expect(err.httpStatus).toBe(status);
      expect(fake().requests).toHaveLength(1);
    });

    it.each(side.dialectErrors)('reads %s', async (_, reply, kind, text) => {
      fake().enqueue(reply);
      const err = await providerFailure(complete());
      expect(err.kind).toBe(kind);
      expect(err.message).toContain(text);
    });

    it('never puts the API key in an error message, even when the server echoes it', async () => {
      fake().enqueue(side.reply({ error: { status: 401, message: `invalid key ${side.apiKey}` } }));
      const err = await providerFailure(complete());
      expect(err.kind).toBe('authentication');
      expect(err.message).not.toContain(side.apiKey);
      expect(err.message).toContain('[redacted]');
    });

    it('keeps how much was cut, then the start of a 1 MB error message', async () => {
      fake().enqueue(side.reply({ error: { status: 400, message: HUGE } }));
      const err = await providerFailure(complete());
      expect(err.kind).toBe('invalid_request');
      // The note comes first: a bidi override left open in the kept text cannot reverse it.
      const head = `${side.errorHead} HTTP 400 (the first 2,000 of 1,000,010 characters): start xxx`;
      expect(err.message.startsWith(head)).toBe(true);
      expect(err.message.length).toBeLessThan(2_100);
      expect(err.message.endsWith('xxx…')).toBe(true);
    });

    it('a refused connection → connection (retryable), without the key', async () => {
      const closed = await side.start();
      await closed.close();
      const err = await providerFailure(
        side.make(closed.url).complete(harness().request(), { signal: new AbortController().signal }),
      );
      expect(err.kind).toBe('connection');
      expect(err.retryable).toBe(true);
      expect(err.message).not.toContain(side.apiKey);
    });

    it('close() ends a hanging reply so the client sees a connection failure', async () => {
      const server = await side.start();
      server.enqueue({ hang: true });
      const pending = providerFailure(side.make(server.url).complete(harness().request(), { signal }));
      await waitUntil(() => server.requests.length === 1, 'the request to reach the fake server');
      await server.close();
      expect((await pending).kind).toBe('connection');
    });
  });

  describe('over HTTP: bodies that are not a usable answer', () => {
    it.each([...COMMON_BAD_BODIES, ...side.badBodies])(
      '2xx with %s → bad_response (LLM_BAD_RESPONSE, retryable)',
      async (_, reply) => {
        fake().enqueue(reply);
        const err = await providerFailure(complete());
        expect(err.kind).toBe('bad_response');
        expect(err.code).toBe('LLM_BAD_RESPONSE');
        expect(err.retryable).toBe(true);
        expect(err.message).toMatch(side.badResponse.message);
        expect(err.httpStatus).toBe(side.badResponse.httpStatus);
        expect(fake().requests).toHaveLength(1);
      },
    );

    it('never puts the API key in the message when an invalid body echoes it', async () => {
      fake().enqueue({ raw: `${side.apiKey} is not JSON` });
      const err = await providerFailure(complete());
      expect(err.kind).toBe('bad_response');
      expect(err.message).not.toContain(side.apiKey);
    });

    it('an over-long tool name or id is a bad response (retryable), the name cut in the message', async () => {
      fake().enqueue(side.toolCall(LONG_NAME));
      const err = await providerFailure(complete());
      expect(err.kind).toBe('bad_response');
      expect(err.retryable).toBe(true);
      expect(err.message).toContain(`${LONG_NAME.length} characters`);
      expect(err.message.length).toBeLessThan(400);

      fake().enqueue(side.toolCall('inspect_current_node', `toolu_${'9'.repeat(MAX_TOOL_USE_ID_CHARS)}`));
      const byId = await providerFailure(complete());
      expect(byId.kind).toBe('bad_response');
      expect(byId.message.length).toBeLessThan(400);
    });

    it('a tool name of exactly 64 characters is still a tool call', async () => {
      fake().enqueue(side.toolCall('t'.repeat(MAX_TOOL_NAME_CHARS)));
      const response = await complete();
      expect(response.content[0]).toMatchObject({ type: 'tool_use', name: 't'.repeat(MAX_TOOL_NAME_CHARS) });
    });

    it.each([
      [
        'cut mid-body (content-length longer than what arrives)',
        { ...side.reply({ text: 'a long answer' }), fault: 'truncate' },
      ],
      ['reset before the response', { fault: 'reset' }],
    ] as Array<[string, FakeReply]>)('a connection %s → connection (LLM_CONNECTION, retryable)', async (_, reply) => {
      fake().enqueue(reply);
      const err = await providerFailure(complete());
      expect(err.kind).toBe('connection');
      expect(err.code).toBe('LLM_CONNECTION');
      expect(err.retryable).toBe(true);
      expect(fake().requests).toHaveLength(1);
    });

    it('an abort while the answer is awaited rethrows the signal reason', async () => {
      const controller = new AbortController();
      const reason = new Error('node deadline');
      // The answer is held until the test lets it go: the abort comes while the client waits for it.
      const held = createGate();
      fake().enqueue(() => held.promise.then(() => side.reply({ text: 'slow' })));
      const pending = harness().provider.complete(harness().request(), { signal: controller.signal });
      await waitUntil(() => fake().requests.length === 1, 'the request to reach the fake server');
      controller.abort(reason);
      await expect(pending).rejects.toBe(reason);
      held.open();
    });
  });
}
