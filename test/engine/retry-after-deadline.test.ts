import { describe, expect, it } from 'vitest';
import { waitForEvent } from '../support/api-fixtures.js';
import { useAnthropicTestApp, waitForStatus } from '../support/build-app.js';
import { errorBody, textMessage } from '../support/fake-anthropic.js';
import { createManualClock } from '../support/manual-clock.js';

/**
 * A retry-after longer than what is left before the call's deadline (docs/design.md#transport-retries): the node fails
 * at once with LLM_RATE_LIMIT and the requested wait in the error's details, instead of sleeping
 * until the deadline and reporting NODE_TIMEOUT. CONCURRENCY 1 shows the call's slot is freed.
 * Waits and deadlines run on a manual clock: "at once" means "before the clock moved at all".
 */
const clock = createManualClock();
const app = useAnthropicTestApp({ env: { CONCURRENCY: '1' }, overrides: { clock } });

function definition(timeoutMs: number | undefined, workflowTimeoutMs?: number) {
  return {
    name: 'retry-after-deadline',
    agents: { a: { model: 'anthropic/claude-sonnet-5-5' } },
    root: { type: 'prompt', name: 'ask', agent: 'a', user: 'Hello', ...(timeoutMs ? { timeoutMs } : {}) },
    options: { cache: false, ...(workflowTimeoutMs ? { timeoutMs: workflowTimeoutMs } : {}) },
  };
}

async function submit(timeoutMs: number | undefined, workflowTimeoutMs?: number): Promise<string> {
  const payload = definition(timeoutMs, workflowTimeoutMs);
  const res = await app.t.app.inject({ method: 'POST', url: '/v1/workflows', payload });
  expect(res.statusCode).toBe(202);
  return res.json().id as string;
}

async function events(id: string) {
  const res = await app.t.app.inject({ method: 'GET', url: `/v1/workflows/${id}/events?limit=1000` });
  return res.json().items as Array<{ type: string; payload: Record<string, unknown> }>;
}

describe('retry-after past the deadline', () => {
  it('retry-after: 3600 with a 4 s node deadline fails at once with LLM_RATE_LIMIT and retryAfterMs', async () => {
    app.fake.enqueue({
      status: 429,
      headers: { 'retry-after': '3600' },
      body: errorBody('rate_limit_error', 'Number of requests has exceeded your rate limit'),
    });
    const id = await submit(4_000);
    // At once: this test never advances the clock, so a run that waited for anything — the
    // retry-after, or the deadline — would still be running when waitForStatus gives up.
    const done = await waitForStatus(app.t.app, id);
    expect(done.durationMs).toBe(0);
    expect(done.status).toBe('failed');
    const details = { retryAfterMs: 3_600_000 };
    expect(done.error).toMatchObject({ code: 'LLM_RATE_LIMIT', details });
    expect(app.fake.requests).toHaveLength(1);

    const tree = done.tree as { error: unknown };
    expect(tree.error).toMatchObject({ code: 'LLM_RATE_LIMIT', details });
    const all = await events(id);
    expect(all.some((e) => e.type === 'retry')).toBe(false);
    expect(all.find((e) => e.type === 'error')?.payload).toMatchObject({ code: 'LLM_RATE_LIMIT', details });
    const stepEnd = all.find((e) => e.type === 'stepEnd');
    expect(stepEnd?.payload).toMatchObject({ status: 'failed', error: { code: 'LLM_RATE_LIMIT', details } });
    expect(all.find((e) => e.type === 'workflowEnd')?.payload).toMatchObject({ error: { details } });

    // The only concurrency slot is free again: the next call goes straight through.
    app.fake.enqueue({ body: textMessage('next') });
    const next = await waitForStatus(app.t.app, await submit(4_000));
    expect(next.status).toBe('completed');
    expect(app.fake.requests).toHaveLength(2);
  });

  it('the workflow deadline counts too: retry-after 10 s with options.timeoutMs 3 s fails at once', async () => {
    app.fake.enqueue({ status: 429, headers: { 'retry-after': '10' }, body: errorBody('rate_limit_error', 'slow') });
    // The clock stands still here too: ending at all means nothing was waited for.
    const done = await waitForStatus(app.t.app, await submit(undefined, 3_000));
    expect(done.durationMs).toBe(0);
    expect(done.error).toMatchObject({ code: 'LLM_RATE_LIMIT', details: { retryAfterMs: 10_000 } });
    expect(app.fake.requests).toHaveLength(1);
  });

  it('a retry-after that fits is waited as before', async () => {
    app.fake.enqueue(
      { status: 429, headers: { 'retry-after-ms': '200' }, body: errorBody('rate_limit_error', 'slow down') },
      { body: textMessage('after the wait') },
    );
    const id = await submit(4_000);
    await waitForEvent(app.t.app, id, (e) => e.type === 'retry');
    const wait = clock.pending.find((sleep) => sleep.ms === 200);
    expect(wait?.state).toBe('pending');
    await clock.advance(200);
    const done = await waitForStatus(app.t.app, id);
    expect(done.status).toBe('completed');
    expect(done.output).toBe('after the wait');
    expect(wait?.state).toBe('resolved');
    expect(app.fake.requests).toHaveLength(2);
    const retry = (await events(id)).find((e) => e.type === 'retry');
    expect(retry?.payload).toMatchObject({ reason: 'rate_limit', delayMs: 200, code: 'LLM_RATE_LIMIT' });
  });
});
