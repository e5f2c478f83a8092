import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createDeps, type Deps } from '../../src/deps.js';
import { definition, prompt, submit } from '../support/api-fixtures.js';
import { waitForStatus } from '../support/build-app.js';
import { type MetricFamily, parsePrometheusText } from '../support/prometheus-text.js';
import { promtoolCheckMetrics } from '../support/promtool.js';

/**
 * `GET /metrics` on the real app (docs/design.md#http-api-conventions): real workflows on the sim provider move the
 * counters; HTTP requests are labelled by route pattern; the output passes the strict text-format
 * check and `promtool check metrics` (Debian package `prometheus`; missing, the test fails).
 */
let app: FastifyInstance;
let deps: Deps;

beforeAll(async () => {
  deps = await createDeps(loadConfig({ DATABASE_PATH: ':memory:', LOG_LEVEL: 'silent' }));
  app = await buildApp(deps);
  await app.ready();
  await deps.executor.start();
});
afterAll(async () => {
  await app?.close();
  await deps?.close();
});

async function scrape(): Promise<{ text: string; families: Map<string, MetricFamily>; contentType: string }> {
  const res = await app.inject({ method: 'GET', url: '/metrics' });
  expect(res.statusCode).toBe(200);
  const families = new Map(parsePrometheusText(res.body).map((f) => [f.name, f]));
  return { text: res.body, families, contentType: String(res.headers['content-type']) };
}

function value(families: Map<string, MetricFamily>, name: string, labels: Record<string, string> = {}): number {
  const family = families.get(name);
  const sample = family?.samples.find(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  return sample?.value ?? 0;
}

describe('GET /metrics', () => {
  it('is served without credentials, outside /v1, in the Prometheus text format', async () => {
    const { contentType } = await scrape();
    expect(contentType).toBe('text/plain; version=0.0.4; charset=utf-8');
    const docs = await app.inject({ method: 'GET', url: '/openapi.json' });
    expect(Object.keys(docs.json().paths)).not.toContain('/metrics');
  });

  it('counts real workflows, LLM calls, tokens and cache lookups, and labels HTTP by route pattern', async () => {
    const body = definition(prompt('hello'), { name: 'metrics-flow' });
    const first = await submit(app, body);
    expect(first.statusCode).toBe(202);
    await waitForStatus(app, first.json().id);
    const second = await submit(app, body);
    await waitForStatus(app, second.json().id);
    await app.inject({ method: 'GET', url: '/no/such/path' });

    const { families } = await scrape();
    expect(value(families, 'baton_workflows_started_total')).toBe(2);
    expect(value(families, 'baton_workflows_finished_total', { status: 'completed' })).toBe(2);
    expect(value(families, 'baton_llm_calls_total', { provider: 'sim', tier: 'sonnet', purpose: 'prompt' })).toBe(1);
    expect(
      value(families, 'baton_llm_tokens_total', { provider: 'sim', tier: 'sonnet', direction: 'input' }),
    ).toBeGreaterThan(0);
    expect(value(families, 'baton_cache_lookups_total', { result: 'miss' })).toBe(1);
    expect(value(families, 'baton_cache_lookups_total', { result: 'hit' })).toBe(1);
    expect(value(families, 'baton_cache_tokens_saved_total')).toBeGreaterThan(0);
    expect(value(families, 'baton_queue_depth')).toBe(0);
    expect(value(families, 'baton_workflows_running')).toBe(0);

    const requests = families.get('baton_http_requests_total')?.samples ?? [];
    const routes = new Set(requests.map((s) => s.labels.route));
    expect(routes).toContain('/v1/workflows');
    expect(routes).toContain('/v1/workflows/:id');
    expect(routes).toContain('unmatched');
    expect([...routes].some((r) => r?.includes('wf_') || r?.includes('/no/such'))).toBe(false);
    expect(
      value(families, 'baton_http_requests_total', { method: 'POST', route: '/v1/workflows', status: '202' }),
    ).toBe(2);
    expect(value(families, 'baton_http_requests_total', { route: 'unmatched', status: '404' })).toBe(1);
  });

  it('passes the strict format check and promtool check metrics', async () => {
    const { text, families } = await scrape();
    expect(families.size).toBeGreaterThan(20);
    for (const family of families.values()) {
      expect(family.help, family.name).toBeTruthy();
      // Naming rules promtool lints: `_total` exactly on counters.
      expect(family.name.endsWith('_total'), family.name).toBe(family.type === 'counter');
    }
    expect(promtoolCheckMetrics(text)).toEqual({ output: '', status: 0 });
  });
});
