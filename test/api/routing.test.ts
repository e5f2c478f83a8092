import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../support/build-app.js';

/**
 * POST /v1/complexity/classify (a dry run) and GET /v1/models
 * (docs/design.md#complexity-allocation-selection-and-review, docs/design.md#providers-and-models).
 */
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ MODEL_PRICES: JSON.stringify({ 'sim/opus': { input: 10, output: 50 } }) });
});
afterAll(() => t.close());

const classify = (payload: unknown) =>
  t.app.inject({ method: 'POST', url: '/v1/complexity/classify', payload: payload as object });

describe('POST /v1/complexity/classify', () => {
  it('sums the signals, maps the score to a level, and shows the allocation and the models auto picks', async () => {
    const res = await classify({ task: { type: 'change', signals: ['feature', 'security', 'many_files'] } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      complexity: 'complex',
      source: 'signals',
      score: 4,
      signals: ['feature', 'security', 'many_files'],
      prompt_nodes: 0,
      allocation: {
        max_agents: 8,
        planning: 'opus',
        development: 'sonnet',
        testing: 'haiku',
        review: 'deep',
        parallel: true,
        human_checkpoint: false,
      },
      models: { planning: 'sim/opus', development: 'sim/sonnet', testing: 'sim/haiku', review: 'sim/sonnet' },
      required_agents: {
        source: 'task',
        roles: [
          { role: 'planning', reason: 'complex: the allocation plans on opus' },
          { role: 'development', reason: 'feature: code changes, and is tested' },
          { role: 'testing', reason: 'feature: code changes, and is tested' },
          { role: 'review', reason: 'security: reviewed whatever the complexity' },
        ],
      },
    });
  });

  it('names the agent roles the task needs, or the roles the definition names itself', async () => {
    const rolesOf = async (payload: unknown) => {
      const res = await classify(payload);
      expect(res.statusCode, res.body).toBe(200);
      const { source, roles } = res.json().required_agents;
      return { source, roles: roles.map((r: { role: string }) => r.role) };
    };
    expect(await rolesOf({ task: { type: 'change', signals: ['tests_only'] } })).toEqual({
      source: 'task',
      roles: ['testing', 'review'],
    });
    expect(await rolesOf({ task: { type: 'change', complexity: 'critical' } })).toEqual({
      source: 'task',
      roles: ['planning', 'development', 'testing', 'review'],
    });
    // No task: the tree's scope (one prompt: simple) reviews once; the work is developed and tested.
    expect(await rolesOf({})).toEqual({ source: 'task', roles: ['development', 'testing', 'review'] });
    const root = {
      type: 'sequence',
      name: 'flow',
      steps: [
        { type: 'prompt', name: 'write', agent: 'coder', user: 'x' },
        { type: 'prompt', name: 'check', agent: { select: { role: 'testing' } }, user: 'x' },
      ],
    };
    const res = await classify({
      task: { type: 'change', complexity: 'critical' },
      agents: { coder: { model: 'auto', role: 'development' } },
      root,
    });
    expect(res.json().required_agents).toEqual({
      source: 'definition',
      roles: [
        { role: 'development', reason: 'prompt write runs agent coder (development)' },
        { role: 'testing', reason: 'prompt check selects a testing agent' },
      ],
    });
  });

  it('takes a declared level first, else derives the scope from the tree', async () => {
    expect(
      (await classify({ task: { type: 'change', complexity: 'critical', signals: ['typo_fix'] } })).json(),
    ).toMatchObject({
      complexity: 'critical',
      source: 'declared',
      score: null,
      allocation: { human_checkpoint: true, max_agents: 12 },
    });
    const steps = Array.from({ length: 6 }, (_, i) => ({ type: 'prompt', name: `p${i}`, agent: 'a', user: 'x' }));
    expect((await classify({ root: { type: 'parallel', name: 'all', steps } })).json()).toMatchObject({
      complexity: 'moderate',
      source: 'tree',
      signals: ['many_files'],
      score: 1,
      prompt_nodes: 6,
    });
  });

  it('answers 400 naming the field for an unknown signal or level', async () => {
    const res = await classify({ task: { type: 'change', signals: ['huge'] } });
    expect(res.statusCode).toBe(400);
    expect(res.json().details[0].path).toContain('task.signals');
    expect((await classify({ task: { type: 'change', complexity: 'epic' } })).statusCode).toBe(400);
    expect((await classify({ extra: 1 })).statusCode).toBe(400);
  });
});

describe('GET /v1/models', () => {
  it('lists providers, the tiers with their models and prices, and the configured prices', async () => {
    const res = await t.app.inject({ url: '/v1/models' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.providers).toContainEqual({ name: 'sim', configured: true, simulated: true });
    expect(body.providers).toContainEqual({ name: 'anthropic', configured: false, simulated: false });
    expect(body.defaultModel).toBe('sonnet');
    expect(body.tiers).toEqual([
      { tier: 'haiku', model: 'sim/haiku', price: { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 } },
      {
        tier: 'sonnet',
        model: 'sim/sonnet',
        price: { input: 3, output: 15, cacheRead: 0.30000000000000004, cacheWrite: 3.75 },
      },
      { tier: 'opus', model: 'sim/opus', price: { input: 10, output: 50, cacheRead: 1, cacheWrite: 12.5 } },
    ]);
    expect(body.prices).toEqual([
      { model: 'sim/opus', price: { input: 10, output: 50, cacheRead: 1, cacheWrite: 12.5 } },
    ]);
  });
});
