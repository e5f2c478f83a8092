import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LlmRequest } from '../../../src/domain/llm.js';
import { createAnthropicProvider } from '../../../src/llm/anthropic.js';
import { createOpenAiProvider } from '../../../src/llm/openai.js';
import { errorBody, type FakeServer, startFakeAnthropic } from '../../helpers/fake-anthropic.js';
import { chatError, startFakeOpenAi } from '../../helpers/fake-openai.js';
import { providerFailure } from '../../helpers/provider-failure.js';

/**
 * A provider's error message becomes the node's and the workflow's error, four events and a log
 * line: a provider answering a 1 MB message must not put a megabyte in each (the hostile-string
 * browser suite found one in the dashboard six times over).
 */

const HUGE = `start ${'x'.repeat(1_000_000)} end`;
const signal = new AbortController().signal;
const request: LlmRequest = { model: 'm', messages: [{ role: 'user', content: 'hi' }], maxTokens: 16 };

let anthropic: FakeServer;
let openai: FakeServer;
beforeAll(async () => {
  anthropic = await startFakeAnthropic({
    defaultReply: () => ({ status: 400, body: errorBody('invalid_request_error', HUGE) }),
  });
  openai = await startFakeOpenAi({ defaultReply: () => ({ status: 400, body: chatError('invalid_request', HUGE) }) });
});
afterAll(async () => {
  await anthropic.close();
  await openai.close();
});

describe('a provider error message is bounded', () => {
  it.each([
    [
      'Anthropic',
      () =>
        createAnthropicProvider({
          maxResponseBytes: 16 * 1024 * 1024,
          apiKey: 'sk-ant-test-000',
          baseURL: anthropic.url,
        }),
    ],
    [
      'OpenAI-compatible',
      () =>
        createOpenAiProvider({ maxResponseBytes: 16 * 1024 * 1024, apiKey: 'sk-openai-test-000', baseURL: openai.url }),
    ],
  ])('%s: how much was cut, then the start of a 1 MB message', async (name, provider) => {
    const err = await providerFailure(provider().complete(request, { signal }));
    expect(err.kind).toBe('invalid_request');
    // The note comes first: a bidi override left open in the kept text cannot reverse it.
    const head = `${name} HTTP 400 (the first 2,000 of 1,000,010 characters): start xxx`;
    expect(err.message.startsWith(head)).toBe(true);
    expect(err.message.length).toBeLessThan(2_100);
    expect(err.message.endsWith('xxx…')).toBe(true);
  });
});
