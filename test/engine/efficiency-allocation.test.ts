import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp, waitForStatus } from '../support/build-app.js';

/**
 * `sequential_when_parallel_possible` was given to runs that the allocation itself
 * made sequential (a routed simple task runs its parallel nodes one step at a time).
 */
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

async function factorsOf(task: Record<string, unknown> | undefined): Promise<string[]> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/v1/workflows',
    payload: {
      name: 'fan',
      ...(task ? { task } : {}),
      agents: { a: { model: 'sim/haiku', simulate: { latencyMs: 5 } } },
      root: {
        type: 'parallel',
        name: 'fan',
        steps: [
          { type: 'prompt', name: 'left', agent: 'a', user: 'left' },
          { type: 'prompt', name: 'right', agent: 'a', user: 'right' },
        ],
      },
      options: { cache: false },
    },
  });
  expect(res.statusCode, res.body).toBe(202);
  const id = res.json().id as string;
  await waitForStatus(t.app, id);
  const metrics = (await t.app.inject({ method: 'GET', url: `/v1/workflows/${id}/metrics` })).json();
  return metrics.efficiency.efficiency_factors as string[];
}

describe('efficiency factors under the allocation', () => {
  it('a routed simple task runs its parallel node one step at a time, and is not blamed for it', async () => {
    expect(await factorsOf({ type: 'chore', complexity: 'simple' })).not.toContain('sequential_when_parallel_possible');
  });

  it('a complex task runs the branches at once: parallel_execution', async () => {
    expect(await factorsOf({ type: 'chore', complexity: 'complex' })).toContain('parallel_execution');
  });
});
