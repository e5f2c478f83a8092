import { describe, expect, it } from 'vitest';
import { DEFAULTS } from '../../src/domain/definition.js';
import { ERROR_CODES } from '../../src/domain/errors.js';
import {
  type FaultProvider,
  promptDefinition,
  RETRY_ATTEMPTS,
  reflectionEvents,
  runThroughRetries,
  script,
  submit,
  useFaultProviders,
  useRowFigures,
} from '../support/llm-fault-providers.js';

/**
 * The hard cap on LLM calls per workflow (`options.limits.maxLlmCalls`, default 200;
 * docs/design.md#events-spans-metrics-and-rewards: it
 * bounds provider requests, every attempt counted): an agent that loops on tools, a node that is
 * reflected on and retried, transport retries and parallel branches all stop at the cap — the fake
 * never sees request cap + 1 — and the workflow fails with LLM_CALL_LIMIT_EXCEEDED. Both providers.
 */
const providers = useFaultProviders();

const record = useRowFigures('llm-call-cap', providers);

/** `count` prompt steps on agent `a`, named `<name><i>`, each asking `<text> <i>.`, with `extra(i)` merged in. */
function promptSteps(count: number, name: string, text: string, extra: (i: number) => object = () => ({})) {
  return Array.from({ length: count }, (_, i) => ({
    type: 'prompt',
    name: `${name}${i}`,
    agent: 'a',
    user: `${text} ${i}.`,
    ...extra(i),
  }));
}

const TOOL = 'inspect_current_node';
const looping = (p: FaultProvider) => p.toolUse(TOOL, {});

async function metricsOf(p: FaultProvider, id: string) {
  const res = await p.app.t.app.inject({ method: 'GET', url: `/v1/workflows/${id}/metrics` });
  expect(res.statusCode).toBe(200);
  return res.json().efficiency.metrics as { provider_requests: number; total_agent_calls: number };
}

function capped(cap: number | undefined) {
  return cap === undefined ? {} : { limits: { maxLlmCalls: cap } };
}

describe('limits.maxLlmCalls holds', () => {
  it.each(providers)('$name: an agent looping on tools stops at the cap, not at maxTurns', async (p) => {
    const cap = 7;
    script(p, [], looping(p));
    const body = promptDefinition(p, { maxTurns: 50 }, capped(cap), { tools: [TOOL] });
    const { done, events } = await runThroughRetries(p, await submit(p, body));
    expect(done.status).toBe('failed');
    expect(done.error).toMatchObject({ code: 'LLM_CALL_LIMIT_EXCEEDED' });
    expect(ERROR_CODES.LLM_CALL_LIMIT_EXCEEDED.reflectable).toBe(false);
    expect(p.app.fake.requests).toHaveLength(cap);
    expect(reflectionEvents(events)).toEqual([]);
    expect((await metricsOf(p, done.id as string)).provider_requests).toBe(cap);
    record(p, 'tool loop', { cap, requests: p.app.fake.requests.length, code: 'LLM_CALL_LIMIT_EXCEEDED' });
  });

  it.each(providers)('$name: reflection retries of a looping node pay from the same budget', async (p) => {
    // maxTurns 3: attempt 1 sends 3 requests and fails MAX_TURNS_EXCEEDED (reflectable), the
    // reflection asks the agent (one request), attempt 2 runs until the cap refuses the next call.
    const cap = 6;
    script(p, [], looping(p));
    const body = promptDefinition(p, { maxTurns: 3 }, capped(cap), { tools: [TOOL] });
    const { done, events } = await runThroughRetries(p, await submit(p, body));
    expect(done.status).toBe('failed');
    expect(done.error).toMatchObject({ code: 'LLM_CALL_LIMIT_EXCEEDED' });
    expect(p.app.fake.requests).toHaveLength(cap);
    expect(events.filter((e) => e.type === 'reflectionStart')).toHaveLength(1);
    expect((done.tree as { attempts: number }).attempts).toBe(2);
    expect((await metricsOf(p, done.id as string)).provider_requests).toBe(cap);
    record(p, 'tool loop + reflection', { cap, requests: p.app.fake.requests.length, attempts: 2 });
  });

  it.each(providers)(
    '$name: transport retries count: a 500 storm stops at the cap before RETRY_MAX_ATTEMPTS',
    async (p) => {
      const cap = 2;
      expect(cap).toBeLessThan(RETRY_ATTEMPTS);
      script(p, [], p.error(500, 'api_error'));
      const { done, events } = await runThroughRetries(p, await submit(p, promptDefinition(p, {}, capped(cap))));
      expect(done.error).toMatchObject({ code: 'LLM_CALL_LIMIT_EXCEEDED' });
      expect(p.app.fake.requests).toHaveLength(cap);
      // A retry the budget cannot pay for is neither announced nor sent.
      expect(events.filter((e) => e.type === 'retry')).toHaveLength(cap - 1);
      record(p, '500 storm', { cap, requests: p.app.fake.requests.length });
    },
  );

  it.each(providers)('$name: the default cap (200) holds across five looping prompts in sequence', async (p) => {
    const cap = DEFAULTS.limits.maxLlmCalls;
    script(p, [], looping(p));
    // Four optional loops of 45 requests each fail with MAX_TURNS_EXCEEDED and the sequence goes
    // on (180 requests); the fifth loop is refused its 21st call, the 201st of the workflow.
    const steps = promptSteps(5, 'loop', 'Loop', (i) => (i < 4 ? { maxTurns: 45, optional: true } : { maxTurns: 50 }));
    const body = {
      ...promptDefinition(p, {}, { reflection: { enabled: false } }, { tools: [TOOL] }),
      root: { type: 'sequence', name: 'loops', steps },
    };
    const { done } = await runThroughRetries(p, await submit(p, body));
    expect(done.error).toMatchObject({ code: 'LLM_CALL_LIMIT_EXCEEDED' });
    expect(p.app.fake.requests).toHaveLength(cap);
    expect((await metricsOf(p, done.id as string)).provider_requests).toBe(cap);
    record(p, 'default cap', { cap, requests: p.app.fake.requests.length });
  });

  it.each(providers)('$name: parallel branches cannot overshoot the cap together', async (p) => {
    const cap = 3;
    const branches = 6;
    script(p, [], p.text('a branch answer'));
    const steps = promptSteps(branches, 'b', 'Branch');
    const body = {
      ...promptDefinition(p, {}, { ...capped(cap), reflection: { enabled: false } }),
      root: { type: 'parallel', name: 'fan', steps },
    };
    const { done } = await runThroughRetries(p, await submit(p, body));
    expect(done.status).toBe('failed');
    expect(done.error).toMatchObject({ code: 'LLM_CALL_LIMIT_EXCEEDED' });
    expect(p.app.fake.requests).toHaveLength(cap);
    expect((await metricsOf(p, done.id as string)).provider_requests).toBe(cap);
    record(p, 'parallel', { cap, branches, requests: p.app.fake.requests.length });
  });

  it.each(providers)('$name: parallel tool loops stop at the cap together', async (p) => {
    const cap = 10;
    script(p, [], looping(p));
    const steps = promptSteps(4, 'b', 'Loop', () => ({ maxTurns: 50 }));
    const body = {
      ...promptDefinition(p, {}, { ...capped(cap), reflection: { enabled: false } }, { tools: [TOOL] }),
      root: { type: 'parallel', name: 'fan', steps },
    };
    const { done } = await runThroughRetries(p, await submit(p, body));
    expect(done.error).toMatchObject({ code: 'LLM_CALL_LIMIT_EXCEEDED' });
    expect(p.app.fake.requests).toHaveLength(cap);
    expect((await metricsOf(p, done.id as string)).provider_requests).toBe(cap);
    record(p, 'parallel tool loops', { cap, requests: p.app.fake.requests.length });
  });
});

describe('the requests a workflow sent are counted once', () => {
  it.each(providers)('$name: parallel branches under the cap: provider_requests = requests the fake saw', async (p) => {
    const branches = 4;
    script(p, [], p.text('a branch answer'));
    const steps = promptSteps(branches, 'b', 'Branch');
    const body = { ...promptDefinition(p), root: { type: 'parallel', name: 'fan', steps } };
    const { done, events } = await runThroughRetries(p, await submit(p, body));
    expect(done.status).toBe('completed');
    expect(p.app.fake.requests).toHaveLength(branches);
    // Each call reports the requests it sent itself: one each, not its neighbours' too.
    const ends = events.filter((e) => e.type === 'agentPromptEnd');
    expect(ends.map((e) => e.payload.requests)).toEqual(Array(branches).fill(1));
    const metrics = await metricsOf(p, done.id as string);
    expect(metrics).toMatchObject({ provider_requests: branches, total_agent_calls: branches });
    record(p, 'parallel accounting', {
      branches,
      requests: p.app.fake.requests.length,
      provider_requests: metrics.provider_requests,
    });
  });
});
