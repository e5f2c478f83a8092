import { register as globalRegistry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import type { EventType, WorkflowEvent } from '../../../src/domain/events.js';
import type { EventBus } from '../../../src/domain/ports.js';
import { systemClock } from '../../../src/inproc/clock.js';
import { createInProcessEventBus } from '../../../src/inproc/event-bus.js';
import { createModelCatalog } from '../../../src/llm/models.js';
import { createSimulatedProvider } from '../../../src/llm/simulated.js';
import { createPrometheusMetrics, type PrometheusMetrics } from '../../../src/telemetry/prometheus.js';
import { fixtureEvent } from '../../support/events.js';
import { parsePrometheusText } from '../../support/prometheus-text.js';
import { promtoolCheckMetrics } from '../../support/promtool.js';

let seq = 0;
function ev(workflowId: string, type: EventType, payload: Record<string, unknown> = {}): WorkflowEvent {
  seq += 1;
  return fixtureEvent({ workflowId, tenantId: 't1', seq, nodeId: null, at: seq }, type, payload);
}

const catalog = createModelCatalog({
  providers: { sim: createSimulatedProvider({ clock: systemClock }) },
  defaultModel: 'sonnet',
  hasAnthropicKey: false,
});
const opened: PrometheusMetrics[] = [];
function open(bus: EventBus, state = { queued: 0, running: 0 }, extra: { walFrames?: () => number } = {}) {
  const metrics = createPrometheusMetrics({
    bus,
    queueDepth: () => state.queued,
    running: () => state.running,
    modelClass: (id) => catalog.classOf(id),
    ...extra,
  });
  opened.push(metrics);
  return metrics;
}
afterEach(() => {
  for (const m of opened.splice(0)) m.close();
});

/** `{labels → value}` of one metric (or one histogram sample name), labels as `k=v,k=v` sorted. */
async function values(metrics: PrometheusMetrics, name: string, sampleName = name): Promise<Record<string, number>> {
  const metric = (await metrics.registry.getMetricsAsJSON()).find((m) => m.name === name);
  if (!metric) throw new Error(`no metric ${name}`);
  const out: Record<string, number> = {};
  for (const v of metric.values) {
    if (
      (v as { metricName?: string }).metricName !== undefined &&
      (v as { metricName?: string }).metricName !== sampleName
    )
      continue;
    const key = Object.entries(v.labels)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, val]) => `${k}=${val}`)
      .join(',');
    out[key] = v.value;
  }
  return out;
}

/** One realistic run: a root workflow with a child, a retry, a reflection, a cache miss and a hit. */
function publishRealisticRun(bus: EventBus): void {
  const usage = { inputTokens: 120, outputTokens: 30 };
  bus.publish([ev('wf_root', 'workflowStart', { name: 'review-pr', parentWorkflowId: null })]);
  bus.publish([
    ev('wf_root', 'stepStart', { node: 'find-bugs', type: 'prompt', attempt: 1 }),
    ev('wf_root', 'cacheMiss', { key: 'k1', node: 'find-bugs' }),
    ev('wf_root', 'agentPromptStart', { node: 'find-bugs', model: 'sim/sonnet', attempt: 1, turn: 1 }),
    ev('wf_root', 'retry', { node: 'find-bugs', reason: 'rate_limit', delayMs: 500, attempt: 1 }),
    ev('wf_root', 'agentPromptEnd', {
      model: 'sim/sonnet',
      simulated: true,
      duration: 900,
      requests: 2,
      tokenUsage: usage,
      costUsd: 0.0009,
    }),
    ev('wf_root', 'invalidResponse', { node: 'find-bugs', attempt: 1 }),
    ev('wf_root', 'reflectionStart', { level: 'prompt', node: 'find-bugs', attempt: 1 }),
    ev('wf_root', 'reflectionEnd', { level: 'prompt', node: 'find-bugs', decision: 'retry', success: true }),
    ev('wf_root', 'agentPromptEnd', {
      model: 'sim/sonnet',
      simulated: true,
      tokenUsage: { inputTokens: 200, outputTokens: 40 },
      costUsd: 0.0015,
      purpose: 'reflection',
    }),
  ]);
  bus.publish([ev('wf_child', 'workflowStart', { name: 'child', parentWorkflowId: 'wf_root' })]);
  bus.publish([
    ev('wf_child', 'cacheHit', {
      key: 'k1',
      model: 'sim/sonnet',
      tokenUsage: usage,
      costSavedUsd: 0.0009,
      simulated: true,
    }),
    ev('wf_child', 'retry', { reason: 'timeout', delayMs: 100 }),
    ev('wf_child', 'agentPromptEnd', {
      model: 'sim/haiku',
      simulated: true,
      tokenUsage: { inputTokens: 50, outputTokens: 10 },
      costUsd: 0.0001,
    }),
    ev('wf_child', 'workflowEnd', { status: 'completed', durationMs: 20 }),
  ]);
  bus.publish([ev('wf_root', 'workflowEnd', { status: 'failed', durationMs: 1500, error: { code: 'X' } })]);
}

describe('createPrometheusMetrics', () => {
  it('counts workflows, LLM calls, tokens, cost, cache, reflections and retries from committed events', async () => {
    const bus = createInProcessEventBus();
    const metrics = open(bus);
    publishRealisticRun(bus);

    expect(await values(metrics, 'baton_workflows_started_total')).toEqual({ '': 2 });
    expect(await values(metrics, 'baton_workflows_finished_total')).toEqual({
      'status=completed': 1,
      'status=failed': 1,
      'status=cancelled': 0,
    });
    expect(await values(metrics, 'baton_llm_calls_total')).toEqual({
      'outcome=ok,provider=sim,purpose=prompt,tier=sonnet': 1,
      'outcome=ok,provider=sim,purpose=reflection,tier=sonnet': 1,
      'outcome=ok,provider=sim,purpose=prompt,tier=haiku': 1,
    });
    expect(await values(metrics, 'baton_llm_tokens_total')).toEqual({
      'direction=input,provider=sim,tier=sonnet': 320,
      'direction=output,provider=sim,tier=sonnet': 70,
      'direction=input,provider=sim,tier=haiku': 50,
      'direction=output,provider=sim,tier=haiku': 10,
    });
    const cost = await values(metrics, 'baton_llm_cost_usd_total');
    // sim/* money is what the call would have cost: labelled simulated, never summed with real money.
    expect(cost['provider=sim,simulated=true,tier=sonnet']).toBeCloseTo(0.0024, 10);
    expect(cost['provider=sim,simulated=true,tier=haiku']).toBeCloseTo(0.0001, 10);
    expect(await values(metrics, 'baton_cache_lookups_total')).toEqual({ 'result=hit': 1, 'result=miss': 1 });
    expect((await values(metrics, 'baton_llm_requests_total'))['provider=sim,tier=sonnet']).toBe(2);
    // Histograms of provider-call latency by provider and tier, and of workflow duration by status.
    const calls = await values(metrics, 'baton_llm_call_duration_seconds', 'baton_llm_call_duration_seconds_count');
    expect(calls['provider=sim,tier=sonnet']).toBeGreaterThanOrEqual(1);
    const sums = await values(metrics, 'baton_llm_call_duration_seconds', 'baton_llm_call_duration_seconds_sum');
    expect(sums['provider=sim,tier=sonnet']).toBeGreaterThanOrEqual(0.9);
    const workflows = await values(metrics, 'baton_workflow_duration_seconds', 'baton_workflow_duration_seconds_sum');
    expect(workflows).toMatchObject({ 'status=completed': 0.02, 'status=failed': 1.5 });
    expect(await values(metrics, 'baton_cache_tokens_saved_total')).toEqual({ '': 150 });
    // What a sim/* answer would have cost is kept apart from money.
    const saved = await values(metrics, 'baton_cache_cost_saved_usd_total');
    expect(saved['simulated=true']).toBeCloseTo(0.0009, 10);
    expect(saved['simulated=false']).toBe(0);
    const reflections = await values(metrics, 'baton_reflections_total');
    expect(reflections['decision=retry,level=prompt']).toBe(1);
    expect(Object.values(reflections).reduce((a, b) => a + b, 0)).toBe(1);
    expect(Object.keys(reflections)).toHaveLength(9); // every level × decision, zero until seen
    expect(await values(metrics, 'baton_retries_total')).toEqual({ 'reason=rate_limit': 1, 'reason=timeout': 1 });
  });

  it('reads queue depth and running workflows at scrape time', async () => {
    const state = { queued: 3, running: 2 };
    const metrics = open(createInProcessEventBus(), state);
    expect(await values(metrics, 'baton_queue_depth')).toEqual({ '': 3 });
    expect(await values(metrics, 'baton_workflows_running')).toEqual({ '': 2 });
    state.queued = 0;
    state.running = 5;
    expect(await values(metrics, 'baton_queue_depth')).toEqual({ '': 0 });
    expect(await values(metrics, 'baton_workflows_running')).toEqual({ '': 5 });
  });

  it('reads the WAL frames counter at scrape time, only when a source is given', async () => {
    let frames = 0;
    const metrics = open(createInProcessEventBus(), undefined, { walFrames: () => frames });
    expect(await values(metrics, 'baton_sqlite_wal_frames_total')).toEqual({ '': 0 });
    frames = 120;
    expect(await values(metrics, 'baton_sqlite_wal_frames_total')).toEqual({ '': 120 });
    frames = 125;
    expect(await values(metrics, 'baton_sqlite_wal_frames_total')).toEqual({ '': 125 });
    const without = open(createInProcessEventBus());
    const names = (await without.registry.getMetricsAsJSON()).map((m) => m.name);
    expect(names).not.toContain('baton_sqlite_wal_frames_total');
  });

  it('keeps label cardinality bounded and ignores malformed payloads', async () => {
    const bus = createInProcessEventBus();
    const metrics = open(bus);
    bus.publish([
      ev('w', 'agentPromptEnd', { model: 'sim/a', tokenUsage: { inputTokens: 1, outputTokens: 1 }, costUsd: 0 }),
      ev('w', 'agentPromptEnd', { model: 'sim/b-opus', tokenUsage: { inputTokens: 1, outputTokens: 1 }, costUsd: 0 }),
      ev('w', 'agentPromptEnd', { model: 'evil/c', tokenUsage: 'garbage', costUsd: -5 }),
      ev('w', 'agentPromptEnd', { model: 'sim/a', costUsd: Number.NaN }),
      ev('w', 'agentPromptEnd', { model: 42 }),
      ev('w', 'workflowEnd', { status: 'exploded' }),
      ev('w', 'reflectionEnd', { level: 'cosmic', decision: 'retry' }),
      ev('w', 'retry', {}),
    ]);
    expect(await values(metrics, 'baton_llm_calls_total')).toEqual({
      'outcome=ok,provider=sim,purpose=prompt,tier=other': 2,
      'outcome=ok,provider=sim,purpose=prompt,tier=opus': 1,
      'outcome=ok,provider=other,purpose=prompt,tier=other': 1,
      'outcome=ok,provider=unknown,purpose=prompt,tier=other': 1,
    });
    expect((await values(metrics, 'baton_llm_tokens_total'))['direction=input,provider=other,tier=other']).toBe(0);
    expect((await values(metrics, 'baton_llm_cost_usd_total'))['provider=other,simulated=false,tier=other']).toBe(0);
    expect((await values(metrics, 'baton_workflows_finished_total'))['status=other']).toBe(1);
    expect((await values(metrics, 'baton_reflections_total'))['decision=retry,level=other']).toBe(1);
    expect(await values(metrics, 'baton_retries_total')).toEqual({ 'reason=unknown': 1 });
  });

  it('observes HTTP requests by method, route pattern and status', async () => {
    const metrics = open(createInProcessEventBus());
    metrics.observeHttp('GET', '/v1/workflows/:id', 200, 0.004);
    metrics.observeHttp('GET', '/v1/workflows/:id', 404, 0.002);
    metrics.observeHttp('POST', '/v1/workflows', 202, 0.3);
    metrics.observeHttp('BREW', '', 404, Number.NaN);

    expect(await values(metrics, 'baton_http_requests_total')).toEqual({
      'method=GET,route=/v1/workflows/:id,status=200': 1,
      'method=GET,route=/v1/workflows/:id,status=404': 1,
      'method=POST,route=/v1/workflows,status=202': 1,
      'method=other,route=unmatched,status=404': 1,
    });
    const name = 'baton_http_request_duration_seconds';
    expect(await values(metrics, name, `${name}_count`)).toEqual({
      'method=GET,route=/v1/workflows/:id': 2,
      'method=POST,route=/v1/workflows': 1,
      'method=other,route=unmatched': 1,
    });
    const sums = await values(metrics, name, `${name}_sum`);
    expect(sums['method=GET,route=/v1/workflows/:id']).toBeCloseTo(0.006, 10);
    const buckets = await values(metrics, name, `${name}_bucket`);
    expect(buckets['le=0.005,method=GET,route=/v1/workflows/:id']).toBe(2);
    expect(buckets['le=0.25,method=POST,route=/v1/workflows']).toBe(0);
    expect(buckets['le=0.5,method=POST,route=/v1/workflows']).toBe(1);
  });

  it('stops counting after close, and instances never share a registry (nor touch the global one)', async () => {
    const bus = createInProcessEventBus();
    const first = open(bus);
    const second = open(bus);
    bus.publish([ev('w', 'workflowStart')]);
    first.close();
    first.close();
    bus.publish([ev('w', 'workflowStart')]);

    expect(await values(first, 'baton_workflows_started_total')).toEqual({ '': 1 });
    expect(await values(second, 'baton_workflows_started_total')).toEqual({ '': 2 });
    expect(first.registry).not.toBe(second.registry);
    expect(globalRegistry.getSingleMetric('baton_workflows_started_total')).toBeUndefined();
  });

  it('exposes valid Prometheus text 0.0.4 with HELP and TYPE for every baton_ family', async () => {
    const bus = createInProcessEventBus();
    const metrics = open(bus, { queued: 1, running: 1 });
    publishRealisticRun(bus);
    metrics.observeHttp('GET', '/v1/workflows/:id', 200, 0.01);
    metrics.observeHttp('GET', 'unmatched', 404, 0.001);

    expect(metrics.registry.contentType).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = await metrics.registry.metrics();
    const families = parsePrometheusText(text);
    const names = families.map((f) => f.name);
    for (const name of [
      'baton_http_requests_total',
      'baton_http_request_duration_seconds',
      'baton_workflows_started_total',
      'baton_workflows_finished_total',
      'baton_workflows_running',
      'baton_queue_depth',
      'baton_llm_calls_total',
      'baton_llm_requests_total',
      'baton_llm_call_duration_seconds',
      'baton_workflow_duration_seconds',
      'baton_llm_tokens_total',
      'baton_llm_cost_usd_total',
      'baton_cache_lookups_total',
      'baton_cache_tokens_saved_total',
      'baton_reflections_total',
      'baton_retries_total',
      'baton_process_cpu_user_seconds_total',
      'baton_nodejs_heap_size_used_bytes',
    ]) {
      expect(names).toContain(name);
    }
    for (const family of families) {
      expect(family.name.startsWith('baton_')).toBe(true);
      expect(family.help, family.name).toBeTruthy();
      expect(family.type, family.name).not.toBe('untyped');
      // Naming rules promtool lints: `_total` exactly on counters.
      expect(family.name.endsWith('_total'), family.name).toBe(family.type === 'counter');
    }
    expect(families.find((f) => f.name === 'baton_http_request_duration_seconds')?.type).toBe('histogram');
    expect(text).not.toContain('/v1/workflows/wf_');

    expect(promtoolCheckMetrics(text)).toEqual({ output: '', status: 0 });
  });
});
