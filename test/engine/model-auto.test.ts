import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPLEXITIES } from '../../src/domain/task.js';
import { allEvents, waitForEvent } from '../support/api-fixtures.js';
import { buildTestApp, type TestApp, waitForStatus } from '../support/build-app.js';

/**
 * `model: "auto"` (docs/design.md#complexity-allocation-selection-and-review): role → tier (the allocation table) →
 * MODEL_TIERS, at every level.
 */
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({
    MODEL_TIERS: JSON.stringify({ haiku: 'sim/small', sonnet: 'sim/medium', opus: 'sim/large' }),
  });
});
afterAll(() => t.close());

const ROLES = ['planning', 'development', 'testing', 'review'] as const;

async function modelsUsed(complexity: string): Promise<Record<string, string>> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/v1/workflows',
    payload: {
      name: `auto-${complexity}`,
      task: { type: 'routing', complexity },
      agents: Object.fromEntries(ROLES.map((role) => [role, { model: 'auto', role }])),
      root: {
        type: 'sequence',
        name: 'main',
        steps: ROLES.map((role) => ({ type: 'prompt', name: `${role}-step`, agent: role, user: `Do the ${role}.` })),
      },
      // Every level asks the same prompts: each must reach its model, not the cache.
      options: { cache: false },
    },
  });
  expect(res.statusCode, res.body).toBe(202);
  const id = res.json().id as string;
  // A critical task waits for a person first (docs/design.md#complexity-allocation-selection-and-review).
  if (complexity === 'critical') {
    await waitForEvent(t.app, id, (e) => e.type === 'checkpoint');
    expect((await t.app.inject({ method: 'POST', url: `/v1/workflows/${id}/approve` })).statusCode).toBe(202);
  }
  expect((await waitForStatus(t.app, id)).status).toBe('completed');
  const starts = (await allEvents(t.app, id)).filter((e) => e.type === 'agentPromptStart');
  return Object.fromEntries(starts.map((e) => [e.payload.agent as string, e.payload.model as string]));
}

describe('model: "auto"', () => {
  it('resolves per role and complexity as the allocation table says, for all five levels', async () => {
    const byLevel: Record<string, Record<string, string>> = {};
    for (const complexity of COMPLEXITIES) byLevel[complexity] = await modelsUsed(complexity);
    const small = 'sim/small';
    const medium = 'sim/medium';
    const large = 'sim/large';
    expect(byLevel).toEqual({
      trivial: { planning: small, development: small, testing: small, review: medium },
      simple: { planning: small, development: small, testing: small, review: medium },
      moderate: { planning: medium, development: medium, testing: small, review: medium },
      complex: { planning: large, development: medium, testing: small, review: medium },
      critical: { planning: large, development: medium, testing: medium, review: medium },
    });
  });

  it('needs the agent’s role, at submission', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/workflows',
      payload: {
        name: 'no-role',
        agents: { a: { model: 'auto' }, b: {} },
        root: {
          type: 'sequence',
          name: 'main',
          steps: [
            { type: 'prompt', name: 'one', agent: 'a', user: 'x' },
            { type: 'prompt', name: 'two', agent: 'b', user: 'y', overrides: { model: 'auto' } },
          ],
        },
      },
    });
    expect(res.statusCode).toBe(400);
    expect(
      res
        .json()
        .details.map((d: { path: string }) => d.path)
        .sort(),
    ).toEqual(['agents.a.model', 'root.steps.1.overrides.model']);
  });
});
