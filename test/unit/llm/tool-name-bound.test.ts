import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_TOOL_NAME_CHARS, MAX_TOOL_USE_ID_CHARS } from '../../../src/domain/llm.js';
import { createAnthropicProvider } from '../../../src/llm/anthropic.js';
import { createOpenAiProvider } from '../../../src/llm/openai.js';
import { type FakeServer as FakeAnthropic, startFakeAnthropic, toolUseMessage } from '../../helpers/fake-anthropic.js';
import { chatToolCall, type FakeServer, startFakeOpenAi } from '../../helpers/fake-openai.js';
import { providerFailure } from '../../helpers/provider-failure.js';

/**
 * Issue 17 item 11, at the adapters: a tool call naming a tool longer than any tool name may be
 * (64 characters), or with an id past 256, is a bad response of both providers — transient like
 * any bad response, its message naming the tool cut short.
 */
const signal = new AbortController().signal;
const request = { model: 'm', messages: [{ role: 'user' as const, content: 'go' }], maxTokens: 64 };
const LONG = `deploy_${'A'.repeat(1_000_000)}`;

let openai: FakeServer;
let anthropic: FakeAnthropic;
beforeAll(async () => {
  [openai, anthropic] = await Promise.all([startFakeOpenAi(), startFakeAnthropic()]);
});
afterAll(async () => {
  await Promise.all([openai.close(), anthropic.close()]);
});

const providers = () => [
  {
    name: 'OpenAI-compatible',
    fake: openai,
    provider: createOpenAiProvider({ maxResponseBytes: 16 * 1024 * 1024, baseURL: openai.url, apiKey: 'sk-x' }),
    call: (name: string, id?: string) => {
      const body = chatToolCall(name, {});
      const [choice] = body.choices as unknown as Array<{ message: { tool_calls: Array<{ id: string }> } }>;
      const [toolCall] = choice?.message.tool_calls ?? [];
      if (id !== undefined && toolCall) toolCall.id = id;
      return { body };
    },
  },
  {
    name: 'Anthropic',
    fake: anthropic,
    provider: createAnthropicProvider({ maxResponseBytes: 16 * 1024 * 1024, baseURL: anthropic.url, apiKey: 'sk-x' }),
    call: (name: string, id?: string) => {
      const body = toolUseMessage(name, {});
      if (id !== undefined) (body.content[0] as { id: string }).id = id;
      return { body };
    },
  },
];

describe('over-long tool names and ids from a provider', () => {
  it('are LLM_BAD_RESPONSE (retryable), the name cut in the message', async () => {
    for (const { name, fake, provider, call } of providers()) {
      fake.enqueue(call(LONG));
      const err = await providerFailure(provider.complete(request, { signal }));
      expect(err.kind, name).toBe('bad_response');
      expect(err.retryable, name).toBe(true);
      expect(err.message, name).toContain(`${LONG.length} characters`);
      expect(err.message.length, name).toBeLessThan(400);

      fake.enqueue(call('inspect_current_node', `toolu_${'9'.repeat(MAX_TOOL_USE_ID_CHARS)}`));
      const byId = await providerFailure(provider.complete(request, { signal }));
      expect(byId.kind, name).toBe('bad_response');
      expect(byId.message.length, name).toBeLessThan(400);
    }
  });

  it('a name of exactly 64 characters is still a tool call', async () => {
    for (const { name, fake, provider, call } of providers()) {
      fake.enqueue(call('t'.repeat(MAX_TOOL_NAME_CHARS)));
      const response = await provider.complete(request, { signal });
      expect(response.content[0], name).toMatchObject({ type: 'tool_use', name: 't'.repeat(MAX_TOOL_NAME_CHARS) });
    }
  });
});
