import fastify, { type FastifyInstance } from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { metricsRoutes } from '../../src/api/analytics/metrics.routes.js';
import { registerAuth } from '../../src/api/http/auth.js';
import { registerErrorHandling } from '../../src/api/http/error-handler.js';
import { loadConfig } from '../../src/config.js';
import type { RewardRecord } from '../../src/domain/metrics.js';
import type { Status } from '../../src/domain/status.js';
import { summarizeRun } from '../../src/metrics/efficiency.js';
import { rewardFor } from '../../src/metrics/rewards.js';
import { createSqliteMetricsStore } from '../../src/store/sqlite/metrics.repo.js';
import { newWorkflow, openMemoryStore, type StoreFixture } from '../support/store-fixtures.js';
import { p, RunBuilder } from '../unit/metrics/fixtures.js';

/** The metrics routes over a real in-memory store, mounted on a bare app (deps/app wiring is the lead's). */

const ACME = { authorization: 'Bearer acme-key-0123456789' };
const OTHER = { authorization: 'Bearer other-key-0123456789' };
const NOW = Date.parse('2026-01-07T00:00:00.000Z');

let fx: StoreFixture;
let app: FastifyInstance;

beforeEach(async () => {
  fx = openMemoryStore();
  const config = loadConfig({
    DATABASE_PATH: ':memory:',
    LOG_LEVEL: 'silent',
    API_KEYS: 'acme:acme-key-0123456789,other:other-key-0123456789',
  });
  app = fastify();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  registerErrorHandling(app, {});
  registerAuth(app, config);
  const clock = { now: () => NOW, sleep: async () => {} };
  await app.register(metricsRoutes, {
    deps: { metrics: createSqliteMetricsStore(fx.db, fx.committer), store: fx.store, clock },
  });
  await app.ready();
});

afterEach(async () => {
  await app.close();
  fx.db.close();
});

async function workflow(status: Status, taskType = 'review'): Promise<string> {
  const created = newWorkflow({ tenantId: 'acme' });
  await fx.store.create(created);
  const id = created.workflow.id;
  if (status === 'idle') return id;
  const base = summarizeRun(
    new RunBuilder(p('a'), { task: { type: taskType }, status: status === 'running' ? 'completed' : status }).input(),
  );
  const record = { ...base, task_id: id };
  const reward = rewardFor(record, [], { workflowStatus: status });
  await fx.store.commit({
    workflows: [{ id, status }],
    ...(status === 'running' ? {} : { efficiency: [{ ...record, tenant_id: 'acme' }] }),
    ...(reward && status !== 'running' ? { rewards: [{ ...reward, tenant_id: 'acme' }] } : {}),
  });
  return id;
}

describe('metrics routes', () => {
  it('GET /v1/workflows/:id/metrics: record and reward; 404 for another tenant; 409 NOT_TERMINAL while running', async () => {
    const done = await workflow('completed');
    const res = await app.inject({ method: 'GET', url: `/v1/workflows/${done}/metrics`, headers: ACME });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.efficiency).toMatchObject({ task_id: done, outcome: 'success', outcome_reason: 'spec_validated' });
    expect(body.reward).toMatchObject({ workflow_id: done, outcome_reward: 0.3, preference_reward: null });

    expect((await app.inject({ method: 'GET', url: `/v1/workflows/${done}/metrics`, headers: OTHER })).statusCode).toBe(
      404,
    );
    const running = await workflow('running');
    const busy = await app.inject({ method: 'GET', url: `/v1/workflows/${running}/metrics`, headers: ACME });
    expect(busy.statusCode).toBe(409);
    expect(busy.json().code).toBe('NOT_TERMINAL');

    const cancelled = await workflow('cancelled');
    const c = await app.inject({ method: 'GET', url: `/v1/workflows/${cancelled}/metrics`, headers: ACME });
    expect(c.json().reward).toBeNull();
  });

  it('POST /v1/workflows/:id/feedback recomputes preference and aggregate', async () => {
    const done = await workflow('completed');
    const post = (actions: unknown) =>
      app.inject({ method: 'POST', url: `/v1/workflows/${done}/feedback`, headers: ACME, payload: { actions } });
    const first = await post(['commit', 'deploy']);
    expect(first.statusCode).toBe(200);
    const reward = first.json().reward as RewardRecord;
    expect(reward.preference_reward).toBe(0.9);
    // 0.6·0.3 + 0.25·1 + 0.15·0.9 (the fixture run is at baseline: efficiency 1)
    expect(reward.aggregate_reward).toBeCloseTo(0.18 + 0.25 + 0.135, 6);
    expect(reward.updated_at).toBe('2026-01-07T00:00:00.000Z');
    expect((await post(['revert'])).json().reward.preference_reward).toBeCloseTo((0.8 + 1 - 1) / 3, 6);

    const bad = await post(['like']);
    expect(bad.statusCode).toBe(400);
    expect((await post([])).statusCode).toBe(400);
  });

  it('POST feedback: 409 while running and for a cancelled workflow, 404 for another tenant', async () => {
    const running = await workflow('running');
    const cancelled = await workflow('cancelled');
    const done = await workflow('completed');
    const post = (id: string, headers = ACME) =>
      app.inject({ method: 'POST', url: `/v1/workflows/${id}/feedback`, headers, payload: { actions: ['commit'] } });
    const r = await post(running);
    expect([r.statusCode, r.json().code]).toEqual([409, 'NOT_TERMINAL']);
    const c = await post(cancelled);
    expect([c.statusCode, c.json().code]).toEqual([409, 'CONFLICT']);
    expect((await post(done, OTHER)).statusCode).toBe(404);
  });

  it('GET /v1/metrics/efficiency and /v1/rewards list with averages', async () => {
    await workflow('completed', 'review');
    await workflow('completed', 'fix');
    await workflow('failed', 'fix');
    const eff = await app.inject({ method: 'GET', url: '/v1/metrics/efficiency?taskType=fix', headers: ACME });
    expect(eff.statusCode).toBe(200);
    const body = eff.json();
    expect(body.records).toHaveLength(2);
    expect(body.aggregate.by_task_type.fix).toMatchObject({ count: 2 });
    expect(body.aggregate.overall.count).toBe(2);
    const bad = await app.inject({ method: 'GET', url: '/v1/metrics/efficiency?complexity=huge', headers: ACME });
    expect(bad.statusCode).toBe(400);
    // Query parameters are camelCase (docs/design.md#http-api-conventions); the old spelling is refused with the
    // right one named.
    const old = await app.inject({ method: 'GET', url: '/v1/metrics/efficiency?task_type=fix', headers: ACME });
    expect(old.statusCode).toBe(400);
    expect(old.json().message).toContain('taskType');

    const rewards = await app.inject({ method: 'GET', url: '/v1/rewards?limit=10', headers: ACME });
    expect(rewards.statusCode).toBe(200);
    expect(rewards.json().records).toHaveLength(3);
    expect(rewards.json().averages).toMatchObject({ count: 3, preference: null });
    expect((await app.inject({ method: 'GET', url: '/v1/rewards', headers: OTHER })).json().records).toEqual([]);
  });
});
