import { describe, expect, it } from 'vitest';
import { allEvents, findNode, type NodeJson, severity, submit } from '../support/api-fixtures.js';
import { useAnthropicTestApp, waitForStatus } from '../support/build-app.js';
import { textMessage } from '../support/fake-anthropic.js';

/**
 * groundswell's reflection controls (docs/workflows.md#reflection): `GET …/reflection` says which levels are
 * on and why, `POST …/nodes/{nodeId}/reflect` reopens a failed workflow, reflects on the node with
 * the person's note and runs it once more — only that node: other failures stand.
 */
const app = useAnthropicTestApp();

/** A prompt whose first answer breaks the schema (the sim's script), later ones pass. */
function failingOnce(name: string) {
  return { type: 'prompt', name, agent: name, user: `Rate ${name}`, responseFormat: severity };
}
function simAgent() {
  return { model: 'sim/sonnet', simulate: { responses: [{ json: { severity: 'catastrophic' } }] } };
}

async function submitFailed(body: unknown) {
  const res = await submit(app.t.app, body);
  expect(res.statusCode).toBe(202);
  const id = res.json().id as string;
  const done = await waitForStatus(app.t.app, id);
  expect(done.status).toBe('failed');
  return { id, root: done.tree as NodeJson };
}

const reflect = (id: string, nodeId: string, payload?: unknown, headers: Record<string, string> = {}) =>
  app.t.app.inject({
    method: 'POST',
    url: `/v1/workflows/${id}/nodes/${nodeId}/reflect`,
    headers,
    ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
  });

const settings = async (id: string) => {
  const res = await app.t.app.inject({ method: 'GET', url: `/v1/workflows/${id}/reflection` });
  expect(res.statusCode).toBe(200);
  return res.json();
};

function nodeId(root: NodeJson, name: string): string {
  const node = findNode(root, name);
  if (!node) throw new Error(`no node ${name}`);
  return node.id as string;
}

describe('reflection by hand', () => {
  it('reflects with the note, applies the revisions and completes the node', async () => {
    app.fake.enqueue({ body: textMessage('not json at all') });
    const { id, root } = await submitFailed({
      name: 'by-hand',
      agents: { a: { model: 'anthropic/claude-sonnet-5-5' } },
      root: { type: 'prompt', name: 'rate', agent: 'a', user: 'Rate it', responseFormat: severity },
      options: { cache: false },
    });
    const rate = nodeId(root, 'rate');
    const before = await settings(id);
    expect(before.nodes[0]).toMatchObject({
      nodeId: rate,
      promptLevel: { enabled: false, source: 'default' },
      byHand: { requests: 0, maxRequests: 3, refusal: null },
    });

    app.fake.requests.length = 0;
    app.fake.enqueue(
      { body: textMessage('{"shouldRetry": true, "reason": "use the enum", "revisedPromptData": {"hint": "low"}}') },
      { body: textMessage('{"severity": "low"}') },
    );
    const res = await reflect(id, rate, { reason: 'the answer must be one of low, medium, high' });
    expect(res.statusCode).toBe(202);
    expect(res.json()).toMatchObject({ workflowId: id, nodeId: rate, workflowStatus: 'running' });
    const done = await waitForStatus(app.t.app, id);
    expect(done.status).toBe('completed');
    expect(done.output).toEqual({ severity: 'low' });

    const sent = app.fake.requests.map((r) => JSON.stringify(r.body));
    expect(sent).toHaveLength(2);
    expect(sent[0]).toContain('<person_note>');
    expect(sent[0]).toContain('the answer must be one of low, medium, high');
    expect(sent[1]).toContain('hint');

    const history = (await app.t.app.inject({ method: 'GET', url: `/v1/workflows/${id}/reflections` })).json().items;
    expect(history).toHaveLength(1);
    expect(history[0]).toMatchObject({
      level: 'workflow',
      success: true,
      resolution: { decision: 'retry', revisedPromptData: true },
    });
    expect(history[0].reason).toContain('retry asked for by hand');
    const events = await allEvents(app.t.app, id);
    expect(events.find((e) => e.type === 'reflectionStart')?.payload).toMatchObject({ requested: true });
    expect(events.filter((e) => e.type === 'workflowEnd').map((e) => e.payload.status)).toEqual([
      'failed',
      'completed',
    ]);
    expect((await settings(id)).nodes[0].byHand).toMatchObject({ requests: 1 });
  });

  it('gives no free attempt to the other failed branch', async () => {
    const { id, root } = await submitFailed({
      name: 'two-failures',
      agents: { a: simAgent(), b: simAgent() },
      root: { type: 'parallel', name: 'both', steps: [failingOnce('a'), failingOnce('b')] },
      options: { cache: false },
    });
    const a = nodeId(root, 'a');
    const b = nodeId(root, 'b');
    expect((await reflect(id, a)).statusCode).toBe(202);
    const again = await waitForStatus(app.t.app, id);
    expect(again.status).toBe('failed');
    const after = again.tree as NodeJson;
    expect(findNode(after, 'a')).toMatchObject({ status: 'completed', attempts: 2 });
    expect(findNode(after, 'b')).toMatchObject({ status: 'failed', attempts: 1 });

    expect((await reflect(id, b)).statusCode).toBe(202);
    const done = await waitForStatus(app.t.app, id);
    expect(done.status).toBe('completed');
    expect(findNode(done.tree as NodeJson, 'a')).toMatchObject({ attempts: 2 });
  });

  it('has one winner when two requests race', async () => {
    const { id, root } = await submitFailed({
      name: 'race',
      agents: { a: simAgent() },
      root: failingOnce('a'),
      options: { cache: false },
    });
    const a = nodeId(root, 'a');
    const answers = await Promise.all([reflect(id, a), reflect(id, a)]);
    expect(answers.map((r) => r.statusCode).sort()).toEqual([202, 409]);
    expect((await waitForStatus(app.t.app, id)).status).toBe('completed');
    const history = (await app.t.app.inject({ method: 'GET', url: `/v1/workflows/${id}/reflections` })).json().items;
    expect(history).toHaveLength(1);
  });

  it('refuses with 409 saying why, and 404 for what the tenant cannot see', async () => {
    const { id, root } = await submitFailed({
      name: 'refusals',
      agents: { a: simAgent(), b: { model: 'sim/sonnet' } },
      root: { type: 'sequence', name: 'seq', steps: [failingOnce('a'), failingOnce('b')] },
      options: { cache: false, reflection: { maxAttempts: 1 } },
    });
    const seq = nodeId(root, 'seq');
    const b = nodeId(root, 'b');
    const a = nodeId(root, 'a');
    const container = await reflect(id, seq);
    expect(container.statusCode).toBe(409);
    expect(container.json().message).toContain('only prompt nodes reflect');
    const idle = await reflect(id, b);
    expect(idle.statusCode).toBe(409);
    expect(idle.json().message).toContain('is idle');
    expect((await reflect(id, 'nd_nope')).statusCode).toBe(404);
    expect((await reflect('wf_nope', a)).statusCode).toBe(404);
    expect((await reflect(id, a, { reason: 'x', extra: 1 })).statusCode).toBe(400);

    expect((await reflect(id, a)).statusCode).toBe(202);
    expect((await waitForStatus(app.t.app, id)).status).toBe('completed');
    const done = await reflect(id, a);
    expect(done.statusCode).toBe(409);
    expect(done.json().message).toContain('the workflow is completed');
    const view = await settings(id);
    expect(view.nodes.find((n: { nodeId: string }) => n.nodeId === a).byHand).toMatchObject({
      requests: 1,
      maxRequests: 1,
    });
  });

  it('caps the requests per node at options.reflection.maxAttempts', async () => {
    const stubborn = {
      model: 'sim/sonnet',
      simulate: { responses: [{ json: { severity: 'catastrophic' } }, { json: { severity: 'catastrophic' } }] },
    };
    const { id, root } = await submitFailed({
      name: 'cap',
      agents: { a: stubborn },
      root: failingOnce('a'),
      options: { cache: false, reflection: { maxAttempts: 1 } },
    });
    const a = nodeId(root, 'a');
    expect((await reflect(id, a)).statusCode).toBe(202);
    expect((await waitForStatus(app.t.app, id)).status).toBe('failed');
    const capped = await reflect(id, a);
    expect(capped.statusCode).toBe(409);
    expect(capped.json().message).toContain('at most 1');
  });
});
