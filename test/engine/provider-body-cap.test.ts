import { describe, expect, it } from 'vitest';
import { createAnthropicProvider } from '../../src/llm/anthropic.js';
import { createOpenAiProvider } from '../../src/llm/openai.js';
import { useAnthropicTestApp, useOpenAiTestApp, waitForStatus } from '../support/build-app.js';
import { type FakeServer, textMessage } from '../support/fake-anthropic.js';
import { chatText } from '../support/fake-openai.js';

/**
 * A provider answer of any size (found by an attack: a 540 MiB body was downloaded 4 times by the
 * OpenAI-compatible adapter, 2.16 GB and 1.27 GB of RSS, then LLM_CONNECTION; the Anthropic adapter
 * failed with INTERNAL). Both adapters cut the body at MAX_PROVIDER_RESPONSE_BYTES while it streams:
 * LLM_BAD_RESPONSE after one request, no retry, and only about the cap downloaded.
 */
const CAP = 256 * 1024;
const CHUNK = 'x'.repeat(64 * 1024);
const BODY_CHUNKS = 1024; // 64 MiB, sent only as fast as the client reads
const env = { MAX_PROVIDER_RESPONSE_BYTES: String(CAP), RETRY_MAX_ATTEMPTS: '4', RETRY_BASE_DELAY_MS: '1' };
const anthropic = useAnthropicTestApp({ env });
const openai = useOpenAiTestApp({ env });

const providers = [
  { name: 'Anthropic (real SDK)', app: anthropic, model: 'anthropic/claude-sonnet-5-5', good: textMessage('small') },
  { name: 'OpenAI-compatible', app: openai, model: 'openai/qwen2.5', good: chatText('small') },
];

async function runOnce(app: (typeof providers)[number]['app'], model: string) {
  const res = await app.t.app.inject({
    method: 'POST',
    url: '/v1/workflows',
    payload: {
      name: 'huge-answer',
      agents: { a: { model } },
      root: { type: 'prompt', name: 'ask', agent: 'a', user: 'Say something' },
      options: { cache: false },
    },
  });
  expect(res.statusCode).toBe(202);
  const id = res.json().id as string;
  const done = await waitForStatus(app.t.app, id);
  const page = await app.t.app.inject({ method: 'GET', url: `/v1/workflows/${id}/events?limit=1000` });
  return { done, events: page.json().items as Array<{ type: string }> };
}

describe.each(providers)('$name: an answer past MAX_PROVIDER_RESPONSE_BYTES', ({ app, model, good }) => {
  it('streamed without content-length: cut at the cap, LLM_BAD_RESPONSE after one request, never retried', async () => {
    const fake: FakeServer = app.fake;
    const before = fake.bytesSent;
    fake.enqueue({ stream: { chunk: CHUNK, count: BODY_CHUNKS } });
    const { done, events } = await runOnce(app, model);
    expect(done.status).toBe('failed');
    expect(done.error).toMatchObject({ code: 'LLM_BAD_RESPONSE' });
    expect((done.error as { message: string }).message).toContain(`larger than ${CAP} bytes`);
    expect(fake.requests).toHaveLength(1);
    expect(events.filter((e) => e.type === 'retry')).toHaveLength(0);
    // What the server could push into socket buffers before the client hung up, not the 64 MiB body.
    expect(fake.bytesSent - before).toBeLessThan(16 * 1024 * 1024);
  });

  it('declared by content-length: refused before the body is read', async () => {
    app.fake.enqueue({ raw: JSON.stringify({ padding: 'y'.repeat(CAP) }) });
    const { done } = await runOnce(app, model);
    expect(done.error).toMatchObject({ code: 'LLM_BAD_RESPONSE' });
    expect(app.fake.requests).toHaveLength(1);
  });

  it('an answer under the cap is read as before', async () => {
    app.fake.enqueue({ body: good });
    const { done } = await runOnce(app, model);
    expect(done.status).toBe('completed');
    expect(done.output).toBe('small');
  });
});

describe('only the network failures are connection errors', () => {
  const notNetwork = new RangeError('Invalid string length');

  it('OpenAI-compatible: a fault of ours is not LLM_CONNECTION (it would be retried as one)', async () => {
    const provider = createOpenAiProvider({
      baseURL: 'http://127.0.0.1:9/v1',
      maxResponseBytes: CAP,
      fetch: async () => {
        throw notNetwork;
      },
    });
    const signal = new AbortController().signal;
    const call = provider.complete(
      { model: 'qwen', maxTokens: 10, messages: [{ role: 'user', content: 'hi' }] },
      { signal },
    );
    await expect(call).rejects.toBe(notNetwork);
  });

  it('OpenAI-compatible: a refused connection still is', async () => {
    const provider = createOpenAiProvider({ baseURL: 'http://127.0.0.1:9/v1', maxResponseBytes: CAP });
    const signal = new AbortController().signal;
    const call = provider.complete(
      { model: 'qwen', maxTokens: 10, messages: [{ role: 'user', content: 'hi' }] },
      { signal },
    );
    await expect(call).rejects.toMatchObject({ code: 'LLM_CONNECTION' });
  });

  it('Anthropic: a refused connection is LLM_CONNECTION', async () => {
    const provider = createAnthropicProvider({
      apiKey: 'sk-ant-test-000',
      baseURL: 'http://127.0.0.1:9',
      maxResponseBytes: CAP,
    });
    const signal = new AbortController().signal;
    const call = provider.complete(
      { model: 'claude', maxTokens: 10, messages: [{ role: 'user', content: 'hi' }] },
      { signal },
    );
    await expect(call).rejects.toMatchObject({ code: 'LLM_CONNECTION' });
  });
});
