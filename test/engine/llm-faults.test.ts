import { describe, expect, it } from 'vitest';
import { ERROR_CODES, type ErrorCode } from '../../src/domain/errors.js';
import { allEvents, waitForEvent, waitUntil } from '../support/api-fixtures.js';
import { waitForStatus } from '../support/build-app.js';
import type { FakeReply } from '../support/fake-anthropic.js';
import {
  expectNextWorkflowRuns,
  type FaultProvider,
  nestedJson,
  promptDefinition,
  RETRY_ATTEMPTS,
  RETRY_BASE_DELAY_MS,
  readEverything,
  reflectionEvents,
  runThroughRetries,
  script,
  submit,
  useFaultProviders,
  useRowFigures,
} from '../support/llm-fault-providers.js';

/**
 * The LLM fault matrix: every row against both providers, the fake Anthropic API through
 * the real SDK and a fake OpenAI-compatible server through baton's adapter. Waits are measured on
 * the injected clock — what the retry layer asks the clock to sleep, and the clock time at which
 * the fake saw the next request — never on the wall clock. Every row ends with every read a
 * client can make answering 200 without the provider key, and a next workflow completing on the
 * one concurrency slot.
 */
const providers = useFaultProviders();

const record = useRowFigures('llm-faults', providers);

/** Every provider with every row: `it.each` over provider × fault. */
function matrix<R extends { fault: string }>(rows: readonly R[]): Array<{ p: FaultProvider } & R> {
  return providers.flatMap((p) => rows.map((row) => ({ p, ...row })));
}

const failedWith = (done: Record<string, unknown>) => (done.error as { code?: string } | null)?.code;
const tree = (done: Record<string, unknown>) => done.tree as { attempts: number; status: string };

describe('transient faults: bounded transport retries, then a clear error code, no reflection', () => {
  const rows: Array<{ fault: string; reply: (p: FaultProvider) => FakeReply; code: ErrorCode }> = [
    { fault: 'HTTP 500', reply: (p) => p.error(500, 'api_error'), code: 'LLM_SERVER_ERROR' },
    { fault: 'HTTP 503', reply: (p) => p.error(503, 'api_error'), code: 'LLM_OVERLOADED' },
    { fault: 'HTTP 529', reply: (p) => p.error(529, 'overloaded_error'), code: 'LLM_OVERLOADED' },
    { fault: 'connection reset', reply: () => ({ fault: 'reset' }), code: 'LLM_CONNECTION' },
    {
      fault: 'malformed JSON',
      reply: () => ({ raw: '{"id": "msg_1", "content": [{"type": "te' }),
      code: 'LLM_BAD_RESPONSE',
    },
    { fault: 'truncated body', reply: (p) => ({ ...p.text('cut short'), fault: 'truncate' }), code: 'LLM_CONNECTION' },
    // Deeper than DEFAULTS.maxJsonDepth: whatever walks it next (the next request's body, storage)
    // would overflow its stack. An answer nobody can use, like a garbled body.
    {
      fault: 'tool input nested 10 000 deep',
      reply: (p) => p.toolUseJson('list_siblings_children', nestedJson(10_000)),
      code: 'LLM_BAD_RESPONSE',
    },
  ];

  it.each(matrix(rows))(
    '$p.name: $fault on every request → $code after RETRY_MAX_ATTEMPTS',
    async ({ p, fault, reply, code }) => {
      script(
        p,
        Array.from({ length: RETRY_ATTEMPTS }, () => reply(p)),
        p.text('never reached'),
      );
      const id = await submit(p, promptDefinition(p));
      const { done, events, waits } = await runThroughRetries(p, id);

      expect(done.status).toBe('failed');
      expect(failedWith(done)).toBe(code);
      expect(ERROR_CODES[code].retryable).toBe(true);
      // Bounded: exactly RETRY_MAX_ATTEMPTS requests, RETRY_MAX_ATTEMPTS − 1 announced retries.
      expect(p.app.fake.requests).toHaveLength(RETRY_ATTEMPTS);
      const retries = events.filter((e) => e.type === 'retry');
      expect(retries.map((e) => e.payload.code)).toEqual(Array(RETRY_ATTEMPTS - 1).fill(code));
      const reason = ERROR_CODES[code].retryReason === 'rate_limit' ? 'rate_limit' : 'timeout';
      expect(retries.every((e) => e.payload.reason === reason)).toBe(true);
      // Exponential backoff with equal jitter: the n-th wait lies in [base·2ⁿ⁻¹/2, base·2ⁿ⁻¹].
      waits.forEach((wait, n) => {
        const exponential = RETRY_BASE_DELAY_MS * 2 ** n;
        expect(wait).toBeGreaterThanOrEqual(exponential / 2);
        expect(wait).toBeLessThanOrEqual(exponential);
      });
      // Each next request reached the fake exactly when the wait before it ended, on the clock.
      const gaps = p.sentAt.slice(1).map((at, i) => at - (p.sentAt[i] ?? 0));
      expect(gaps).toEqual(waits);
      // Transport retries never consume a reflection attempt, and a transport code is not reflected on.
      expect(reflectionEvents(events)).toEqual([]);
      expect(tree(done).attempts).toBe(1);
      const workflowError = events.find((e) => e.type === 'error')?.payload;
      expect(workflowError).toMatchObject({ code });
      expect(JSON.stringify(events)).not.toContain('INTERNAL');

      await readEverything(p, done);
      record(p, fault, { requests: p.app.fake.requests.length, waitsMs: waits, code: failedWith(done) });
      await expectNextWorkflowRuns(p);
    },
  );
});

describe('429 with retry-after', () => {
  it.each(providers)(
    '$name: retry-after: 2 → the next call goes out 2.0–2.6 s later on the clock, no reflection',
    async (p) => {
      script(p, [p.error(429, 'rate_limit_error', { 'retry-after': '2' }), p.text('after the wait')]);
      const id = await submit(p, promptDefinition(p));
      const retry = await waitForEvent(p.app.t.app, id, (e) => e.type === 'retry');
      const delayMs = retry.payload.delayMs as number;
      expect(retry.payload).toMatchObject({ reason: 'rate_limit', code: 'LLM_RATE_LIMIT', attempt: 1 });
      expect(delayMs).toBeGreaterThanOrEqual(2000);
      expect(delayMs).toBeLessThanOrEqual(2600);
      // What the retry layer sleeps is what it announced, on the injected clock, from the 429 on.
      const sleep = p.clock.pending.find((s) => s.ms === delayMs);
      expect(sleep).toMatchObject({ state: 'pending', since: p.sentAt[0] });
      await p.clock.advance(delayMs - 1);
      expect(sleep?.state).toBe('pending');
      expect(p.app.fake.requests).toHaveLength(1);
      await p.clock.advance(1);

      const done = await waitForStatus(p.app.t.app, id);
      expect(done.status).toBe('completed');
      expect(done.output).toBe('after the wait');
      expect(p.sentAt).toHaveLength(2);
      const measured = (p.sentAt[1] ?? 0) - (p.sentAt[0] ?? 0);
      expect(measured).toBeGreaterThanOrEqual(2000);
      expect(measured).toBeLessThanOrEqual(2600);
      // No reflection: none announced, none recorded, the node's first attempt is the one that succeeded.
      const events = await allEvents(p.app.t.app, id);
      expect(reflectionEvents(events)).toEqual([]);
      expect(tree(done).attempts).toBe(1);
      await readEverything(p, done);
      const reflections = await p.app.t.app.inject({ method: 'GET', url: `/v1/workflows/${id}/reflections` });
      expect(reflections.json()).toEqual({ items: [] });
      const metrics = await p.app.t.app.inject({ method: 'GET', url: `/v1/workflows/${id}/metrics` });
      expect(metrics.json().efficiency.metrics).toMatchObject({
        provider_requests: 2,
        total_agent_calls: 1,
        retry_count: 1,
      });
      record(p, '429 retry-after 2', {
        requests: p.app.fake.requests.length,
        waitMs: delayMs,
        nextCallAfterMs: measured,
      });
      await expectNextWorkflowRuns(p);
    },
  );

  it.each(providers)(
    '$name: retry-after: 3600 → cut at the node deadline at once (LLM_RATE_LIMIT), slot freed',
    async (p) => {
      script(p, [p.error(429, 'rate_limit_error', { 'retry-after': '3600' })]);
      const id = await submit(p, promptDefinition(p, { timeoutMs: 30_000 }));
      // The clock never moves in this test: the run can only end by not waiting at all.
      const done = await waitForStatus(p.app.t.app, id);
      expect(done.status).toBe('failed');
      expect(done.error).toMatchObject({ code: 'LLM_RATE_LIMIT', details: { retryAfterMs: 3_600_000 } });
      expect(done.durationMs).toBe(0);
      expect(p.app.fake.requests).toHaveLength(1);
      const events = await allEvents(p.app.t.app, id);
      expect(events.filter((e) => e.type === 'retry')).toEqual([]);
      expect(reflectionEvents(events)).toEqual([]);
      // Nothing of this run is left sleeping on the clock (no retry wait, no deadline timer).
      expect(p.clock.pending).toEqual([]);
      await readEverything(p, done);
      record(p, '429 retry-after 3600', { requests: p.app.fake.requests.length, code: failedWith(done), waitedMs: 0 });
      // CONCURRENCY is 1: the next workflow runs only if the failed call gave its slot back.
      await expectNextWorkflowRuns(p);
    },
  );
});

describe('a provider that never answers', () => {
  it.each(providers)('$name: a hang is cut at the node deadline with NODE_TIMEOUT, slot freed', async (p) => {
    script(p, [{ hang: true }]);
    const timeoutMs = 5_000;
    // Reflection off: a NODE_TIMEOUT may be reflected on, which would make this row about reflection.
    const id = await submit(p, promptDefinition(p, { timeoutMs }, { reflection: { enabled: false } }));
    await waitUntil(() => p.app.fake.requests.length === 1, 'the request to reach the fake');
    await p.clock.advance(timeoutMs - 1);
    const running = await p.app.t.app.inject({ method: 'GET', url: `/v1/workflows/${id}` });
    expect(running.json().status).toBe('running');
    await p.clock.advance(1);
    const done = await waitForStatus(p.app.t.app, id);
    expect(done.status).toBe('failed');
    expect(failedWith(done)).toBe('NODE_TIMEOUT');
    expect(done.durationMs).toBe(timeoutMs);
    expect(p.app.fake.requests).toHaveLength(1);
    await readEverything(p, done);
    record(p, 'hang', { requests: p.app.fake.requests.length, code: failedWith(done), cutAtMs: done.durationMs });
    await expectNextWorkflowRuns(p);
  });
});

describe('fail-fast refusals: exactly one call, a clear code, no secret', () => {
  const rows: Array<{ fault: string; status: number; type: string; code: ErrorCode }> = [
    { fault: 'HTTP 400', status: 400, type: 'invalid_request_error', code: 'LLM_INVALID_REQUEST' },
    { fault: 'HTTP 401', status: 401, type: 'authentication_error', code: 'LLM_AUTHENTICATION' },
    { fault: 'HTTP 403', status: 403, type: 'permission_error', code: 'LLM_PERMISSION' },
  ];

  it.each(matrix(rows))('$p.name: $fault → $code after one request', async ({ p, fault, status, type, code }) => {
    script(p, [p.error(status, type)], p.text('a retry would have been answered'));
    const id = await submit(p, promptDefinition(p));
    const done = await waitForStatus(p.app.t.app, id);
    expect(done.status).toBe('failed');
    expect(failedWith(done)).toBe(code);
    expect(ERROR_CODES[code]).toMatchObject({ retryable: false, reflectable: false });
    expect(p.app.fake.requests).toHaveLength(1);
    const message = (done.error as { message: string }).message;
    expect(message).toContain(`HTTP ${status}`);
    const events = await allEvents(p.app.t.app, id);
    expect(events.filter((e) => e.type === 'retry')).toEqual([]);
    expect(reflectionEvents(events)).toEqual([]);
    expect(tree(done).attempts).toBe(1);
    // The fake quoted the key in its error text: nothing baton answers may repeat it.
    await readEverything(p, done);
    record(p, fault, { requests: p.app.fake.requests.length, code: failedWith(done) });
    await expectNextWorkflowRuns(p);
  });
});

describe('hostile answers: a node error or a handled result, never a crash or a 5xx', () => {
  const MiB = 1024 * 1024;

  it.each(providers)('$name: a 1 MiB text answer is kept whole; one byte more is OUTPUT_TOO_LARGE', async (p) => {
    const text = 'x'.repeat(MiB);
    script(p, [p.text(text)]);
    const fits = await waitForStatus(p.app.t.app, await submit(p, promptDefinition(p)), undefined, 15_000);
    expect(fits.status).toBe('completed');
    expect(fits.output).toBe(text);
    expect(p.app.fake.requests).toHaveLength(1);
    await readEverything(p, fits);

    script(p, [p.text(`${text}y`)]);
    const over = await waitForStatus(p.app.t.app, await submit(p, promptDefinition(p)), undefined, 15_000);
    expect(over.status).toBe('failed');
    expect(failedWith(over)).toBe('OUTPUT_TOO_LARGE');
    expect(p.app.fake.requests).toHaveLength(1);
    expect(reflectionEvents(await allEvents(p.app.t.app, over.id as string))).toEqual([]);
    await readEverything(p, over);
    record(p, '1 MiB text', { requests: 2, fits: fits.status, oneByteMore: failedWith(over) });
    await expectNextWorkflowRuns(p);
  });

  const toolRows: Array<{ fault: string; tool: string; input: unknown; told: string }> = [
    {
      fault: 'tool input failing its schema',
      tool: 'list_siblings_children',
      input: { type: 'cousins' },
      told: 'invalid input',
    },
    // A string: Anthropic's tool_use input is not an object, OpenAI's arguments are cut-off JSON.
    {
      fault: 'tool input not an object',
      tool: 'list_siblings_children',
      input: '{"type": "sibl',
      told: 'invalid input',
    },
    {
      fault: 'a tool the agent was not given',
      tool: 'request_spawn_workflow',
      input: { name: 'x' },
      told: 'not available',
    },
    // As deep as an answer may be (DEFAULTS.maxJsonDepth): still an answer, the tool refuses it.
    {
      fault: 'tool input nested 64 deep',
      tool: 'list_siblings_children',
      input: nestedJson(64),
      told: 'invalid input',
    },
  ];

  it.each(matrix(toolRows))(
    '$p.name: $fault → a tool error handed back, then the answer',
    async ({ p, fault, tool, input, told }) => {
      const call = fault.includes('nested') ? p.toolUseJson(tool, input as string) : p.toolUse(tool, input);
      script(p, [call, p.text('answered after the tool error')]);
      const body = promptDefinition(p, {}, {}, { tools: ['list_siblings_children'] });
      const done = await waitForStatus(p.app.t.app, await submit(p, body));
      expect(done.status).toBe('completed');
      expect(done.output).toBe('answered after the tool error');
      expect(p.app.fake.requests).toHaveLength(2);
      const events = await allEvents(p.app.t.app, done.id as string);
      const invocation = events.find((e) => e.type === 'toolInvocation');
      expect(invocation?.payload).toMatchObject({ toolName: tool, isError: true });
      // The model was told what was wrong, in the tool result of its next request.
      expect(JSON.stringify(p.app.fake.requests[1]?.body)).toContain(told);
      await readEverything(p, done);
      record(p, fault, { requests: p.app.fake.requests.length, status: done.status });
    },
  );
});
