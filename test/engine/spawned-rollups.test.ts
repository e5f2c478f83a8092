import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp, waitForStatus } from '../support/build-app.js';

/**
 * Children a model spawned (request_spawn_workflow) were missing from their
 * parent's roll-ups: `subtree` null, `totals.withChildren` short of the trace's figure, and absent
 * from the tree, because the roll-ups followed `workflow` nodes only. The sim agent's script spawns
 * once and then answers; each spawned child is a prompt step by the same agent, on a script of its
 * own, so it spawns in turn: a root, a child, a grandchild (a declared child beside them).
 */
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

const get = async (url: string) => (await t.app.inject({ method: 'GET', url })).json();

describe('spawned children in the roll-ups', () => {
  it('every descendant, declared or spawned, counts once in subtree, withChildren, the tree and the trace', async () => {
    const spawner = {
      model: 'sim/haiku',
      tools: ['request_spawn_workflow'],
      simulate: {
        responses: [
          { toolUse: { name: 'request_spawn_workflow', input: { name: 'helper', description: 'Check the logs.' } } },
          { text: 'done' },
        ],
      },
    };
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/workflows',
      payload: {
        name: 'boss',
        agents: { spawner, plain: { model: 'sim/haiku' } },
        options: { limits: { maxDepth: 2 } },
        root: {
          type: 'sequence',
          name: 'main',
          steps: [
            { type: 'prompt', name: 'ask', agent: 'spawner', user: 'Get help.' },
            {
              type: 'workflow',
              name: 'declared',
              definition: { name: 'side', root: { type: 'prompt', name: 'side', agent: 'plain', user: 'Hi.' } },
            },
          ],
        },
      },
    });
    expect(res.statusCode, res.body).toBe(202);
    const id = res.json().id as string;
    const done = await waitForStatus(t.app, id);
    expect(done.status, JSON.stringify(done.error)).toBe('completed');

    const children = (await get(`/v1/workflows?parentWorkflowId=${id}&limit=50`)).items as Array<{ id: string }>;
    expect(children).toHaveLength(2);
    const trace = await get(`/v1/traces/${done.traceId}`);
    const totals = done.totals as { providerCalls: number; withChildren: { providerCalls: number } };
    // The whole trace: root 2 calls, declared 1, helper 2, its helper 1 (at maxDepth its spawn is refused: 2).
    expect(totals.withChildren.providerCalls).toBe(trace.totals.with_children.provider_calls);
    expect(totals.withChildren.providerCalls).toBeGreaterThan(totals.providerCalls + 1);

    const metrics = await get(`/v1/workflows/${id}/metrics`);
    const subtree = metrics.efficiency.subtree as { workflows: number; provider_requests: number };
    expect(subtree).not.toBeNull();
    expect(subtree.provider_requests + metrics.efficiency.metrics.provider_requests).toBe(
      trace.totals.with_children.provider_calls,
    );

    const text = (await t.app.inject({ method: 'GET', url: `/v1/workflows/${id}/tree?format=text` })).body;
    expect(text.match(/\(spawned\)/g)?.length).toBe(subtree.workflows - 1);
    expect(text).toContain('✓ side [completed]');
  });
});
