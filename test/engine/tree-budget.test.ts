import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/domain/errors.js';
import { allEvents } from '../support/api-fixtures.js';
import { useAnthropicTestApp, waitForStatus } from '../support/build-app.js';
import { textMessage, toolUseMessage } from '../support/fake-anthropic.js';
import { TREE_REQUESTS, treeDefinition, treeReply } from '../support/tree-budget-fixture.js';

/**
 * `options.limits.maxLlmCalls` is a budget of the whole workflow tree: the root,
 * its declared `workflow` children and the children its agents spawn all draw on the root's budget,
 * so a root with `maxLlmCalls: 3` sends 3 provider requests, not 3 per workflow. And the operator's
 * ceiling MAX_LLM_CALLS_PER_WORKFLOW: a client asking for more is refused at submission (400).
 */
const MODEL = 'anthropic/claude-sonnet-5-5';
const app = useAnthropicTestApp({ env: { CONCURRENCY: '4' } });

async function submit(body: unknown, target = app): Promise<string> {
  const res = await target.t.app.inject({ method: 'POST', url: '/v1/workflows', payload: body as object });
  expect(res.statusCode, res.body).toBe(202);
  return res.json().id as string;
}

/** Waits until every workflow of the tree under `id` has ended (children, theirs, spawned ones). */
async function treeEnded(id: string, target = app): Promise<number> {
  let count = 1;
  await waitForStatus(target.t.app, id);
  const res = await target.t.app.inject({ method: 'GET', url: `/v1/workflows?parentWorkflowId=${id}&limit=100` });
  expect(res.statusCode, res.body).toBe(200);
  for (const child of res.json().items as Array<{ id: string }>) count += await treeEnded(child.id, target);
  return count;
}

describe('maxLlmCalls is the budget of the whole tree', () => {
  it('uncapped, the tree makes its 9 requests (the control)', async () => {
    app.fake.setDefault(treeReply);
    const id = await submit(treeDefinition(MODEL));
    const done = await waitForStatus(app.t.app, id);
    expect(done.status, JSON.stringify(done.error)).toBe('completed');
    expect(app.fake.requests).toHaveLength(TREE_REQUESTS);
  });

  it('a root with maxLlmCalls 3 sends exactly 3 requests in its tree; the 4th call fails before it is sent', async () => {
    app.fake.setDefault(treeReply);
    const body = treeDefinition(MODEL, { limits: { maxLlmCalls: 3 }, reflection: { enabled: true, maxAttempts: 3 } });
    const id = await submit(body);
    const done = await waitForStatus(app.t.app, id);
    // Every workflow of the tree has ended (the spawned child too) before the request count is read.
    expect(await treeEnded(id)).toBeGreaterThan(1);
    expect(app.fake.requests).toHaveLength(3);
    expect(done.status).toBe('failed');
    expect(done.error).toMatchObject({ code: 'LLM_CALL_LIMIT_EXCEEDED' });
    expect((done.error as { message: string }).message).toMatch(/tree/);
    expect(ERROR_CODES.LLM_CALL_LIMIT_EXCEEDED).toMatchObject({ retryable: false, reflectable: false });
    // No reflection: asking the agent again would be a 4th request.
    expect((await allEvents(app.t.app, id)).filter((e) => e.type === 'reflectionStart')).toEqual([]);
  });

  it('a child may have a smaller budget of its own, and never spends beyond what the root has left', async () => {
    app.fake.setDefault(treeReply);
    const body = treeDefinition(MODEL, { limits: { maxLlmCalls: 5 }, reflection: { enabled: false } });
    // The declared child asks for 10 of its own: the root's 5 (3 already spent before it) still bind.
    (body.root.steps[2] as { definition: Record<string, unknown> }).definition.options = {
      cache: false,
      limits: { maxLlmCalls: 10 },
    };
    const id = await submit(body);
    const done = await waitForStatus(app.t.app, id);
    expect(await treeEnded(id)).toBeGreaterThan(1);
    expect(app.fake.requests).toHaveLength(5);
    expect(done.error).toMatchObject({ code: 'LLM_CALL_LIMIT_EXCEEDED' });

    // A child's own smaller budget: the root allows 50, the child 1 of its 3 prompts.
    app.fake.requests.length = 0;
    const small = treeDefinition(MODEL, { limits: { maxLlmCalls: 50 }, reflection: { enabled: false } });
    (small.root.steps[2] as { definition: Record<string, unknown> }).definition.options = {
      cache: false,
      limits: { maxLlmCalls: 1 },
    };
    const smallId = await submit(small);
    const smallDone = await waitForStatus(app.t.app, smallId);
    expect(smallDone.error).toMatchObject({ code: 'LLM_CALL_LIMIT_EXCEEDED' });
    expect(await treeEnded(smallId)).toBeGreaterThan(1);
    // p0, the spawner's 2 turns, its spawned child's answer, then k0: the child's one request.
    expect(app.fake.requests).toHaveLength(5);
  });
});

const CEILING = 4;
const ceiled = useAnthropicTestApp({ env: { MAX_LLM_CALLS_PER_WORKFLOW: String(CEILING) } });

describe('MAX_LLM_CALLS_PER_WORKFLOW: the operator ceiling', () => {
  const looping = {
    name: 'loop',
    agents: { a: { model: MODEL, tools: ['inspect_current_node'] } },
    root: { type: 'prompt', name: 'ask', agent: 'a', user: 'Loop.', maxTurns: 50 },
    options: { cache: false },
  };

  it('a client maxLlmCalls above the ceiling is refused with a 400 naming it', async () => {
    for (const body of [
      { ...looping, options: { limits: { maxLlmCalls: CEILING + 1 } } },
      {
        ...looping,
        root: {
          type: 'workflow',
          name: 'kid',
          definition: { name: 'kid', root: looping.root, options: { limits: { maxLlmCalls: 10_000 } } },
        },
      },
    ]) {
      const res = await ceiled.t.app.inject({ method: 'POST', url: '/v1/workflows', payload: body });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().message).toContain('MAX_LLM_CALLS_PER_WORKFLOW');
      expect(res.json().message).toContain(String(CEILING));
    }
    expect(ceiled.fake.requests).toHaveLength(0);
  });

  it('without a maxLlmCalls the budget is min(default, ceiling)', async () => {
    ceiled.fake.setDefault({ body: toolUseMessage('inspect_current_node', {}) });
    const id = await submit(looping, ceiled);
    const done = await waitForStatus(ceiled.t.app, id);
    expect(done.error).toMatchObject({ code: 'LLM_CALL_LIMIT_EXCEEDED' });
    expect(ceiled.fake.requests).toHaveLength(CEILING);
    ceiled.fake.setDefault({ body: textMessage('ok') });
  });
});
