import { describe, expect, it } from 'vitest';
import { createEngineHarness, useEngineHarness } from '../support/engine-harness.js';
import { createManualClock, MANUAL_CLOCK_START, settleEventLoop } from '../support/manual-clock.js';
import { createGate, isReflectionRequest, providerError } from '../support/scripted-model.js';

/** The harness itself (test/support/engine-harness.ts): its clock, its settling, its scripted model. */

const T0 = MANUAL_CLOCK_START;

function flow(root: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return { name: 'harness-flow', agents: { a: { model: 'script/sonnet' } }, root, ...extra };
}
const ask = (name: string, extra: Record<string, unknown> = {}) => ({
  type: 'prompt',
  name,
  agent: 'a',
  user: `say ${name}`,
  ...extra,
});

describe('manual clock', () => {
  it('wakes each sleeper only once time reaches its due time, in due order, at its own due time', async () => {
    const clock = createManualClock();
    const woke: Array<[string, number]> = [];
    for (const [name, ms] of [
      ['c', 300],
      ['a', 100],
      ['b', 200],
      ['a2', 100],
    ] as const) {
      void clock.sleep(ms).then(() => woke.push([name, clock.now() - T0]));
    }
    await clock.advance(99);
    expect(woke).toEqual([]);
    expect(clock.nextDueAt()).toBe(T0 + 100);
    await clock.advance(1);
    expect(woke).toEqual([
      ['a', 100],
      ['a2', 100],
    ]);
    await clock.advance(1_000);
    expect(woke.map(([name]) => name)).toEqual(['a', 'a2', 'b', 'c']);
    expect(woke.slice(2)).toEqual([
      ['b', 200],
      ['c', 300],
    ]);
    expect(clock.now()).toBe(T0 + 1_100);
    expect(clock.pending).toEqual([]);
  });

  it('lets code woken by one sleep schedule the next inside the same advance', async () => {
    const clock = createManualClock();
    const woke: number[] = [];
    void (async () => {
      for (let i = 0; i < 3; i++) {
        await clock.sleep(100);
        // Something between the wake-up and the next sleep that takes more than a microtask.
        await new Promise((resolve) => setImmediate(resolve));
        woke.push(clock.now() - T0);
      }
    })();
    await clock.advance(250);
    expect(woke).toEqual([100, 200]);
    expect(clock.pending.map((s) => s.dueAt - T0)).toEqual([300]);
    await clock.advance(50);
    expect(woke).toEqual([100, 200, 300]);
  });

  it('rejects a sleep with the signal reason when it aborts, and drops it from the queue', async () => {
    const clock = createManualClock();
    const controller = new AbortController();
    const sleeping = clock.sleep(1_000, controller.signal);
    expect(clock.pending).toHaveLength(1);
    const reason = new Error('stop');
    controller.abort(reason);
    await expect(sleeping).rejects.toBe(reason);
    expect(clock.pending).toEqual([]);
    expect(clock.history).toEqual([{ since: T0, ms: 1_000, dueAt: T0 + 1_000, state: 'aborted', endedAt: T0 }]);
    await expect(clock.sleep(10, AbortSignal.abort(reason))).rejects.toBe(reason);
    // A signal that never aborts does not keep a woken sleeper's listener.
    const kept = new AbortController();
    const done = clock.sleep(5, kept.signal);
    await clock.advance(5);
    await expect(done).resolves.toBeUndefined();
  });

  it('set() moves now without waking anyone; a zero sleep is due at once; time never runs backwards on advance', async () => {
    const clock = createManualClock(1_000);
    let woke = false;
    void clock.sleep(500).then(() => {
      woke = true;
    });
    clock.set(2_000);
    await settleEventLoop();
    expect(woke).toBe(false);
    await clock.advance(0);
    expect(woke).toBe(true);
    await expect(clock.sleep(0)).resolves.toBeUndefined();
    await expect(clock.advance(-1)).rejects.toThrow(RangeError);
    await expect(clock.advanceTo(1_500)).rejects.toThrow(/backwards/);
    expect(await clock.advanceToNext()).toBe(false);
  });

  it('settleEventLoop waits out a chain of setImmediate turns and the promises between them', async () => {
    let turns = 0;
    const next = () => {
      if (++turns < 50) setImmediate(() => void Promise.resolve().then(next));
    };
    setImmediate(next);
    await settleEventLoop();
    expect(turns).toBe(50);
  });
});

describe('engine harness', () => {
  const h = useEngineHarness();

  it('runs a workflow in process on the scripted model; nothing moves until the clock does', async () => {
    h.model.enqueue({ text: 'hello', latencyMs: 500 });
    const id = await h.submit(flow(ask('only')));
    await h.settle();
    expect(h.model.inFlight).toHaveLength(1);
    expect(h.hasEnded(id)).toBe(false);
    expect(h.published(id).map((e) => e.type)).toEqual(['workflowStart', 'stepStart', 'agentPromptStart', 'cacheMiss']);
    await h.clock.advance(499);
    expect(h.model.inFlight).toHaveLength(1);
    await h.clock.advance(1);
    const { workflow, events } = await h.untilEnd(id);
    expect(workflow).toMatchObject({ status: 'completed', output: 'hello', startedAt: T0, endedAt: T0 + 500 });
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.find((e) => e.type === 'agentPromptEnd')?.payload).toMatchObject({
      model: 'script/sonnet',
      duration: 500,
      requests: 1,
      tokenUsage: { inputTokens: 10, outputTokens: 5 },
    });
    // Every deadline and latency sleep was disposed with the run: nothing is left on the clock.
    expect(h.clock.pending).toEqual([]);
  });

  it('records each request as it arrived (tool loop), answers text, json and tool_use in order', async () => {
    h.model.enqueue(
      { toolUse: { name: 'inspect_current_node' }, label: 'tool turn' },
      { text: 'I am at node look.', when: (r) => r.messages.length === 3, label: 'after the tool result' },
      { json: { verdict: 'fine' }, label: 'json answer' },
    );
    const agents = { a: { model: 'script/sonnet', tools: ['inspect_current_node'] } };
    const id = await h.submit(flow({ type: 'sequence', name: 'main', steps: [ask('look'), ask('judge')] }, { agents }));
    const { workflow, events } = await h.runUntilEnd(id);
    expect(workflow.status).toBe('completed');
    expect(workflow.output).toBe('{"verdict":"fine"}');
    const [first, second, third] = h.model.calls;
    // Snapshots: the engine extends its request for the next turn, the recorded first turn stays as sent.
    expect(first?.request.messages).toEqual([{ role: 'user', content: 'say look' }]);
    expect(first?.request.tools?.map((t) => t.name)).toEqual(['inspect_current_node']);
    expect(second?.request.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(third?.request.messages.at(-1)).toEqual({ role: 'user', content: 'say judge' });
    expect(h.model.calls.map((c) => c.state)).toEqual(['answered', 'answered', 'answered']);
    expect(events.find((e) => e.type === 'toolInvocation')?.payload).toMatchObject({
      toolName: 'inspect_current_node',
      isError: false,
    });
  });

  it('throws a scripted ProviderError through the real retry layer (a fatal class: one call)', async () => {
    h.model.enqueue({ error: providerError('authentication', 'invalid key', 401) });
    const id = await h.submit(flow(ask('only')));
    const { workflow } = await h.untilEnd(id);
    expect(workflow.error).toMatchObject({ code: 'LLM_AUTHENTICATION' });
    expect(h.model.calls.map((c) => c.state)).toEqual(['failed']);
  });

  it('holds a reply until its gate opens; untilEnd and runUntilEnd name what blocks a workflow instead of hanging', async () => {
    const gate = createGate();
    h.model.enqueue({ text: 'released', until: gate.promise });
    const id = await h.submit(flow(ask('held')));
    // One timer per run (RunDeadlines): armed for the node's 120 s, the earliest of its deadlines.
    await expect(h.untilEnd(id)).rejects.toThrow(
      /has not ended and the engine is idle: scripted calls in flight \[#0 model script\/sonnet.*"say held"\], clock sleepers \[120000 ms due at \+120000\]/,
    );
    await expect(h.runUntilEnd(id, { maxAdvanceMs: 1_000 })).rejects.toThrow(
      /has not ended .*\(and the next sleeper is past maxAdvanceMs, 1000\)/,
    );
    expect(h.clock.now()).toBe(T0);
    gate.open();
    const { workflow } = await h.untilEnd(id);
    expect(workflow).toMatchObject({ status: 'completed', output: 'released' });
  });

  it('runUntilEnd advances from sleeper to sleeper until the end: three 1 s steps take 3 s of clock time', async () => {
    h.model.enqueue(
      { text: 'one', latencyMs: 1_000 },
      { text: 'two', latencyMs: 1_000 },
      { text: 'three', latencyMs: 1_000 },
    );
    const id = await h.submit(flow({ type: 'sequence', name: 'main', steps: [ask('one'), ask('two'), ask('three')] }));
    const { workflow, events } = await h.runUntilEnd(id);
    expect(workflow).toMatchObject({ status: 'completed', output: 'three', endedAt: T0 + 3_000 });
    expect(h.model.calls.map((c) => c.receivedAt - T0)).toEqual([0, 1_000, 2_000]);
    expect(events.at(-1)?.payload).toMatchObject({ status: 'completed', durationMs: 3_000 });
  });
});

describe('engine harness: failing loudly', () => {
  it('an unscripted call is recorded, ends the workflow as INTERNAL, and fails close()', async () => {
    const h = await createEngineHarness();
    const id = await h.submit(flow(ask('nobody-scripted-me')));
    const { workflow } = await h.untilEnd(id);
    expect(workflow.error).toMatchObject({ code: 'INTERNAL' });
    expect(h.model.unexpected).toEqual([expect.objectContaining({ index: 0, reason: 'no scripted reply left' })]);
    expect(() => h.expectNoUnexpectedCalls()).toThrow(
      /1 unexpected call\(s\):\n {2}#0 model script\/sonnet.*say nobody-scripted-me/,
    );
    await expect(h.close()).rejects.toThrow(/unexpected call.*no scripted reply left/s);
  });

  it('a request the next reply does not match is unexpected too; the reply stays unused, and both fail close()', async () => {
    const h = await createEngineHarness();
    h.model.enqueue({
      json: { shouldRetry: false, reason: 'no' },
      when: isReflectionRequest,
      label: 'reflection advice',
    });
    const id = await h.submit(flow(ask('not-a-reflection')));
    const { workflow } = await h.untilEnd(id);
    expect(workflow.error).toMatchObject({ code: 'INTERNAL' });
    expect(h.model.unexpected[0]?.reason).toBe('the next reply (reflection advice) does not match this request');
    await expect(h.close()).rejects.toThrow(
      /does not match this request[\s\S]*1 scripted reply\(ies\) never used: reflection advice/,
    );
  });

  it('a provoked failure taken back with takeUnexpected() leaves close() clean', async () => {
    const h = await createEngineHarness();
    const id = await h.submit(flow(ask('on-purpose')));
    await h.untilEnd(id);
    expect(h.model.takeUnexpected()).toHaveLength(1);
    expect(h.takeEngineErrors()).toEqual([]);
    await expect(h.close()).resolves.toBeUndefined();
  });
});
