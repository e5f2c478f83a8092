import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { definition, findNode, type NodeJson, prompt, submit } from '../support/api-fixtures.js';
import { buildTestApp, type TestApp, waitForStatus } from '../support/build-app.js';

/**
 * POST /v1/workflows/{id}/nodes/{nodeId}/tools/{tool}: a read-only tool run as a node
 * (docs/design.md#http-api-conventions).
 */

const A = { authorization: 'Bearer key-a-0123456789abcdef' };
const B = { authorization: 'Bearer key-b-0123456789abcdef' };
let t: TestApp;
let id: string;
let nodes: { first: NodeJson; second: NodeJson };

beforeAll(async () => {
  t = await buildTestApp({ API_KEYS: 'a:key-a-0123456789abcdef,b:key-b-0123456789abcdef' });
  const res = await submit(
    t.app,
    definition({ type: 'sequence', name: 'main', steps: [prompt('first'), prompt('second')] }),
    A,
  );
  id = res.json().id;
  const view = await waitForStatus(t.app, id, undefined, 5_000, A);
  const tree = view.tree as NodeJson;
  nodes = { first: findNode(tree, 'first')!, second: findNode(tree, 'second')! };
});
afterAll(async () => {
  await t.close();
});

const run = (tool: string, nodeId: string, payload: unknown = {}, headers = A) =>
  t.app.inject({
    method: 'POST',
    url: `/v1/workflows/${id}/nodes/${nodeId}/tools/${tool}`,
    payload: payload as object,
    headers,
  });

describe('exploring tools as a node', () => {
  it('answers what an agent at that node would be told', async () => {
    const current = await run('inspect_current_node', nodes.second.id);
    expect(current.statusCode).toBe(200);
    expect(current.json()).toMatchObject({
      tool: 'inspect_current_node',
      nodeId: nodes.second.id,
      isError: false,
      output: { id: nodes.second.id, name: 'second', status: 'completed', parentName: 'main', childCount: 0, depth: 1 },
    });
    const prior = await run('inspect_prior_outputs', nodes.second.id, { nodeId: nodes.first.id });
    expect(prior.json().output.outputs[0]).toMatchObject({
      nodeId: nodes.first.id,
      name: 'first',
      output: nodes.first.output,
    });
    // Prior outputs as the node saw them: not its container (made of its own output), nothing later.
    const latest = await run('inspect_prior_outputs', nodes.second.id, { count: 5 });
    expect(latest.json().output.outputs.map((o: { name: string }) => o.name)).toEqual(['first']);
    const fromFirst = await run('inspect_prior_outputs', nodes.first.id, { count: 5 });
    expect(fromFirst.json().output.outputs).toEqual([]);
    const siblings = await run('list_siblings_children', nodes.first.id, { type: 'siblings' });
    expect(siblings.json().output).toEqual({
      type: 'siblings',
      nodes: [{ id: nodes.second.id, name: 'second', status: 'completed' }],
    });
  });

  it('refuses a tool that changes anything (403), and answers 404 and 400 clearly', async () => {
    const spawn = await run('request_spawn_workflow', nodes.first.id, { name: 'x', description: 'y' });
    expect(spawn.statusCode).toBe(403);
    expect(spawn.json()).toMatchObject({ code: 'FORBIDDEN', message: expect.stringContaining('read-only') });
    expect((await run('no_such_tool', nodes.first.id)).statusCode).toBe(404);
    expect((await run('inspect_current_node', 'nd_missing')).statusCode).toBe(404);
    const bad = await run('list_siblings_children', nodes.first.id, { type: 'cousins' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toMatch(/invalid input: type/);
    // A refusal of the tool itself is its answer, as the model would get it.
    const refused = await run('inspect_prior_outputs', nodes.first.id, { nodeId: 'nd_other' });
    expect(refused.json()).toMatchObject({ isError: true, output: { error: 'no node "nd_other" in this workflow' } });
  });

  it('is tenant-scoped: another tenant gets 404 for the workflow', async () => {
    const other = await run('inspect_current_node', nodes.first.id, {}, B);
    expect(other.statusCode).toBe(404);
  });
});
