import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allEvents } from '../support/api-fixtures.js';
import { buildTestApp, type TestApp, waitForStatus } from '../support/build-app.js';

/**
 * The allocation governs a routed workflow's run (docs/design.md#complexity-allocation-selection-and-review):
 * `parallel: false` runs a parallel
 * node's steps one at a time, `max_agents` caps the agents working at once. Read from event order:
 * the most prompts between their agentPromptStart and agentPromptEnd at any point.
 */
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

async function mostAtOnce(task: Record<string, unknown> | undefined, branches: number): Promise<number> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/v1/workflows',
    payload: {
      name: 'fan-out',
      ...(task ? { task: { type: 'fan-out', ...task } } : {}),
      agents: { worker: { model: 'sim/haiku', simulate: { latencyMs: 40 } } },
      root: {
        type: 'parallel',
        name: 'all',
        steps: Array.from({ length: branches }, (_, i) => ({
          type: 'prompt',
          name: `b${i}`,
          agent: 'worker',
          user: `Branch ${i}.`,
        })),
      },
      options: { cache: false },
    },
  });
  expect(res.statusCode, res.body).toBe(202);
  const id = res.json().id as string;
  expect((await waitForStatus(t.app, id)).status).toBe('completed');
  let running = 0;
  let most = 0;
  for (const e of await allEvents(t.app, id)) {
    if (e.type === 'agentPromptStart') most = Math.max(most, ++running);
    if (e.type === 'agentPromptEnd') running--;
  }
  return most;
}

describe('allocation at run time', () => {
  it('runs parallel steps one at a time where the allocation says parallel: false', async () => {
    expect(await mostAtOnce({ complexity: 'simple' }, 3)).toBe(1);
    expect(await mostAtOnce({ signals: ['typo_fix'] }, 3)).toBe(1);
  });

  it('caps concurrent agents at max_agents (moderate: 4)', async () => {
    expect(await mostAtOnce({ complexity: 'moderate' }, 6)).toBe(4);
    expect(await mostAtOnce({ complexity: 'complex' }, 6)).toBe(6);
  });

  it('leaves a workflow without a described task as it was written', async () => {
    expect(await mostAtOnce(undefined, 3)).toBe(3);
  });
});
