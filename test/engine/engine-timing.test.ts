import { describe, expect, it } from 'vitest';
import type { AppError } from '../../src/domain/errors.js';
import type { WorkflowEvent } from '../../src/domain/events.js';
import type { LlmRequest } from '../../src/domain/llm.js';
import { useEngineHarness } from '../support/engine-harness.js';
import { MANUAL_CLOCK_START } from '../support/manual-clock.js';
import { createGate, isReflectionRequest, rateLimited, type ScriptedCall } from '../support/scripted-model.js';

/**
 * The engine's timing on the manual clock (docs/design.md#house-style, docs/design.md#execution,
 * docs/design.md#reflection-and-retries): deadlines, the retry layer's waits,
 * reflection's pause, concurrency and cancellation, judged by clock time and event order. No test
 * here waits for real time: the clock moves only when the test advances it.
 */

const T0 = MANUAL_CLOCK_START;
const h = useEngineHarness();

function flow(root: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return { name: 'timing-flow', agents: { a: { model: 'script/sonnet' } }, root, ...extra };
}
const ask = (name: string, extra: Record<string, unknown> = {}) => ({
  type: 'prompt',
  name,
  agent: 'a',
  user: `say ${name}`,
  ...extra,
});
const userText = (request: LlmRequest) => {
  const first = request.messages[0]?.content;
  return typeof first === 'string' ? first : '';
};
const forNode = (name: string) => (request: LlmRequest) => userText(request) === `say ${name}`;
/** The code of the error a call's signal was aborted with. */
const abortCode = (call: ScriptedCall | undefined) => (call?.signal.reason as AppError | undefined)?.code;
const ofType = <T extends WorkflowEvent['type']>(events: readonly WorkflowEvent[], type: T) =>
  events.filter((e): e is Extract<WorkflowEvent, { type: T }> => e.type === type);

describe('deadlines on the injected clock', () => {
  it('a node timeoutMs fires at exactly the advanced time: NODE_TIMEOUT at +1000 ms, not a tick before', async () => {
    h.model.enqueue({ text: 'too late', latencyMs: 60_000 });
    const id = await h.submit(flow(ask('slow', { timeoutMs: 1_000 })));
    await h.settle();
    expect(h.model.inFlight).toHaveLength(1);

    await h.clock.advance(999);
    expect(h.hasEnded(id)).toBe(false);
    expect(h.model.inFlight).toHaveLength(1);

    await h.clock.advance(1);
    const { workflow, events } = await h.untilEnd(id);
    expect(workflow).toMatchObject({ status: 'failed', error: { code: 'NODE_TIMEOUT' }, endedAt: T0 + 1_000 });
    // The deadline aborted the provider call itself, at that instant.
    const [call] = h.model.calls;
    expect(call).toMatchObject({ state: 'aborted', settledAt: T0 + 1_000 });
    expect(abortCode(call)).toBe('NODE_TIMEOUT');
    expect(ofType(events, 'agentPromptEnd')[0]?.payload).toMatchObject({
      duration: 1_000,
      error: { code: 'NODE_TIMEOUT', message: 'node "slow" did not finish within 1000 ms' },
    });
    expect(ofType(events, 'stepEnd')[0]?.payload).toMatchObject({ status: 'failed', durationMs: 1_000 });
    // The model's 60 s answer was never waited for: its sleep left the clock when the call was cut.
    expect(h.clock.history.find((s) => s.ms === 60_000)).toMatchObject({ state: 'aborted', endedAt: T0 + 1_000 });
    expect(h.clock.pending).toEqual([]);
  });

  it('the workflow options.timeoutMs cuts the step in flight at exactly that time: WORKFLOW_TIMEOUT', async () => {
    h.model.enqueue({ text: 'first', latencyMs: 1_000 }, { text: 'never', latencyMs: 10_000 });
    const definition = flow(
      { type: 'sequence', name: 'main', steps: [ask('first'), ask('second')] },
      { options: { timeoutMs: 2_500 } },
    );
    const id = await h.submit(definition);
    await h.clock.advance(1_000);
    expect(h.model.calls.map((c) => c.state)).toEqual(['answered', 'waiting']);

    await h.clock.advance(1_499);
    expect(h.hasEnded(id)).toBe(false);
    await h.clock.advance(1);
    const { workflow, events } = await h.untilEnd(id);
    expect(workflow).toMatchObject({ status: 'failed', error: { code: 'WORKFLOW_TIMEOUT' }, endedAt: T0 + 2_500 });
    const ends = ofType(events, 'stepEnd').map((e) => [e.payload.node, e.payload.status, e.payload.error?.code]);
    expect(ends).toEqual([
      ['first', 'completed', undefined],
      ['second', 'failed', 'WORKFLOW_TIMEOUT'],
      ['main', 'failed', 'WORKFLOW_TIMEOUT'],
    ]);
    expect(ofType(events, 'workflowEnd')[0]?.payload).toMatchObject({ status: 'failed', durationMs: 2_500 });
    expect(h.model.calls[1]).toMatchObject({ state: 'aborted', settledAt: T0 + 2_500 });
  });
});

describe('the single transport-retry layer on the clock', () => {
  it('a 429 with retry-after-ms 300 is retried once the clock has moved 300 ms, not before', async () => {
    h.model.enqueue({ error: rateLimited(300), label: '429' }, { text: 'fine now', label: 'the retry' });
    const id = await h.submit(flow(ask('ask')));
    await h.settle();
    expect(h.model.calls).toHaveLength(1);
    const retry = ofType(h.published(id), 'retry');
    expect(retry.map((e) => e.payload)).toEqual([
      expect.objectContaining({ reason: 'rate_limit', delayMs: 300, attempt: 1, code: 'LLM_RATE_LIMIT' }),
    ]);
    // The wait is a 300 ms sleep on the clock, taken when the 429 arrived.
    expect(h.clock.pending).toContainEqual(expect.objectContaining({ since: T0, ms: 300, dueAt: T0 + 300 }));

    await h.clock.advance(299);
    expect(h.model.calls).toHaveLength(1);
    await h.clock.advance(1);
    expect(h.model.calls.map((c) => c.receivedAt)).toEqual([T0, T0 + 300]);

    const { workflow, events } = await h.untilEnd(id);
    expect(workflow).toMatchObject({ status: 'completed', output: 'fine now' });
    expect(ofType(events, 'agentPromptEnd')[0]?.payload).toMatchObject({ requests: 2, duration: 300 });
    // A transport retry is not a reflection.
    expect(events.some((e) => e.type === 'reflectionStart')).toBe(false);
  });

  it('a retry-after longer than the node deadline fails at once, before the clock moved', async () => {
    h.model.enqueue({ error: rateLimited(3_600_000) });
    const id = await h.submit(flow(ask('ask', { timeoutMs: 4_000 })));
    const { workflow, events } = await h.untilEnd(id);
    expect(h.clock.now()).toBe(T0);
    expect(workflow).toMatchObject({
      status: 'failed',
      endedAt: T0,
      error: { code: 'LLM_RATE_LIMIT', details: { retryAfterMs: 3_600_000 } },
    });
    expect(h.model.calls).toHaveLength(1);
    expect(events.some((e) => e.type === 'retry')).toBe(false);
  });
});

describe('parallel steps', () => {
  it('really run concurrently: both model calls are in flight before either is answered', async () => {
    const left = createGate();
    const right = createGate();
    h.model.enqueue(
      { text: 'L', until: left.promise, when: forNode('left'), label: 'left' },
      { text: 'R', until: right.promise, when: forNode('right'), label: 'right' },
    );
    const id = await h.submit(flow({ type: 'parallel', name: 'fan', steps: [ask('left'), ask('right')] }));
    await h.settle();
    // Neither reply is released yet, and the model has seen both requests.
    expect(h.model.inFlight.map((c) => userText(c.request))).toEqual(['say left', 'say right']);

    // Either may finish first: the right branch completes while the left one is still held.
    right.open();
    await h.settle();
    expect(h.model.calls.map((c) => c.state)).toEqual(['waiting', 'answered']);
    left.open();
    const { workflow, events } = await h.untilEnd(id);
    expect(workflow).toMatchObject({ status: 'completed', output: { left: 'L', right: 'R' } });
    // In the event log: both calls started before the first one ended.
    const calls = events
      .filter((e) => e.type === 'agentPromptStart' || e.type === 'agentPromptEnd')
      .map((e) => `${e.type}:${(e.payload as { node: string }).node}`);
    expect(calls).toEqual([
      'agentPromptStart:left',
      'agentPromptStart:right',
      'agentPromptEnd:right',
      'agentPromptEnd:left',
    ]);
    expect(h.clock.now()).toBe(T0);
  });

  it('two 300 ms calls side by side take 300 ms of clock time, not 600', async () => {
    h.model.enqueue(
      { text: 'L', latencyMs: 300, when: forNode('left') },
      { text: 'R', latencyMs: 300, when: forNode('right') },
    );
    const id = await h.submit(flow({ type: 'parallel', name: 'fan', steps: [ask('left'), ask('right')] }));
    await h.clock.advance(300);
    const { workflow, events } = await h.untilEnd(id);
    expect(workflow).toMatchObject({ status: 'completed', endedAt: T0 + 300 });
    expect(h.model.calls.map((c) => [c.receivedAt - T0, c.settledAt && c.settledAt - T0])).toEqual([
      [0, 300],
      [0, 300],
    ]);
    expect(ofType(events, 'workflowEnd')[0]?.payload.durationMs).toBe(300);
  });
});

describe('workflow-level reflection', () => {
  it('waits retryDelayMs on the clock between the reflection and the next attempt', async () => {
    const responseFormat = { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] };
    h.model.enqueue(
      { text: 'not json', when: (r) => !isReflectionRequest(r), label: 'attempt 1' },
      { json: { shouldRetry: true, reason: 'answer in JSON' }, when: isReflectionRequest, label: 'advice' },
      { json: { ok: true }, when: (r) => !isReflectionRequest(r), label: 'attempt 2' },
    );
    const definition = flow(ask('judge', { responseFormat, enableReflection: false }), {
      options: { reflection: { enabled: true, maxAttempts: 2, retryDelayMs: 5_000 } },
    });
    const id = await h.submit(definition);
    await h.settle();
    // Attempt 1 failed and the agent was asked at once; its retry waits on the clock.
    expect(h.model.calls.map((c) => c.receivedAt)).toEqual([T0, T0]);
    const retried = ofType(h.published(id), 'stepEnd').map((e) => e.payload);
    expect(retried).toEqual([expect.objectContaining({ attempt: 1, status: 'failed', retry: true })]);
    expect(h.clock.pending).toContainEqual(expect.objectContaining({ since: T0, ms: 5_000 }));

    await h.clock.advance(4_999);
    expect(h.model.calls).toHaveLength(2);
    expect(ofType(h.published(id), 'stepStart').map((e) => e.payload.attempt)).toEqual([1]);

    await h.clock.advance(1);
    const { workflow, events } = await h.untilEnd(id);
    expect(workflow).toMatchObject({ status: 'completed', output: { ok: true }, endedAt: T0 + 5_000 });
    expect(h.model.calls[2]?.receivedAt).toBe(T0 + 5_000);
    const starts = ofType(events, 'stepStart').map((e) => [e.payload.attempt, e.at - T0]);
    expect(starts).toEqual([
      [1, 0],
      [2, 5_000],
    ]);
    expect(ofType(events, 'reflectionEnd')[0]?.payload).toMatchObject({
      level: 'workflow',
      decision: 'retry',
      success: true,
    });
  });
});

describe('cancellation', () => {
  it('aborts the call in flight: cancelled at once, the call cut with CANCELLED, no tokens, no time passed', async () => {
    h.model.enqueue({ text: 'never', latencyMs: 60_000 });
    const id = await h.submit(flow(ask('slow')));
    await h.settle();
    const [call] = h.model.inFlight;
    expect(call).toBeDefined();

    const cancelled = await h.cancel(id);
    expect(cancelled?.cancelRequested).toBe(true);
    const { workflow, events } = await h.untilEnd(id);
    expect(workflow.status).toBe('cancelled');
    expect(call?.state).toBe('aborted');
    expect(abortCode(call)).toBe('CANCELLED');
    const ends = ofType(events, 'agentPromptEnd');
    expect(ends.map((e) => e.payload.error?.code)).toEqual(['CANCELLED']);
    expect(ends[0]?.payload.tokenUsage).toBeUndefined();
    expect(ofType(events, 'stepEnd')[0]?.payload).toMatchObject({ node: 'slow', status: 'cancelled' });
    expect(h.clock.now()).toBe(T0);
    expect(h.clock.pending).toEqual([]);
  });

  it('cuts a retry wait too: no second request after the cancel', async () => {
    h.model.enqueue({ error: rateLimited(10_000) });
    const id = await h.submit(flow(ask('ask')));
    await h.settle();
    expect(h.clock.pending).toContainEqual(expect.objectContaining({ ms: 10_000 }));
    await h.cancel(id);
    const { workflow } = await h.untilEnd(id);
    expect(workflow.status).toBe('cancelled');
    await h.clock.advance(10_000);
    expect(h.model.calls).toHaveLength(1);
    expect(h.clock.history.find((s) => s.ms === 10_000)?.state).toBe('aborted');
  });
});
