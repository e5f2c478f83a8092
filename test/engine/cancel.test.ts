import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  allEvents,
  definition,
  findNode,
  type NodeJson,
  prompt,
  submit,
  waitForEvent,
} from '../support/api-fixtures.js';
import { buildTestApp, type TestApp, waitForStatus } from '../support/build-app.js';
import { createManualClock, settleEventLoop } from '../support/manual-clock.js';

/**
 * On a manual clock that no test here advances: a simulated latency never elapses, so whatever ends
 * a call early was the cancellation, and nothing can answer late.
 */
const clock = createManualClock();
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({}, { clock });
});
afterAll(async () => {
  await t.close();
});

describe('cancellation', () => {
  it('cancels before the first model call answers: cancelled, no LLM completion', async () => {
    const res = await submit(
      t.app,
      definition(prompt('slow'), { agents: { a: { model: 'sim/sonnet', simulate: { latencyMs: 10_000 } } } }),
    );
    const { id } = res.json();
    await settleEventLoop();
    // The call is in flight: its 10 s latency is asleep on the clock.
    const latency = clock.pending.find((sleep) => sleep.ms === 10_000);
    expect(latency?.state).toBe('pending');
    const cancel = await t.app.inject({ method: 'POST', url: `/v1/workflows/${id}/cancel` });
    expect(cancel.statusCode).toBe(202);
    expect(cancel.json()).toMatchObject({ id, cancelRequested: true });
    const done = await waitForStatus(t.app, id, ['completed', 'failed', 'cancelled'], 3_000);
    expect(done.status).toBe('cancelled');
    // Cut by the cancel, not waited out; and nothing is left asleep that could still deliver an answer.
    expect(latency?.state).toBe('aborted');
    expect(clock.pending).toEqual([]);
    // The call ends without an answer: its agentPromptEnd carries the cancellation, no tokens.
    const ends = (await allEvents(t.app, id)).filter((e) => e.type === 'agentPromptEnd');
    expect(ends.map((e) => (e.payload.error as { code: string } | undefined)?.code)).toEqual(['CANCELLED']);
    expect(ends[0]?.payload.tokenUsage).toBeUndefined();
  });

  it('cancels during a run: the finished step stays completed, the running one is cancelled', async () => {
    const res = await submit(
      t.app,
      definition(
        {
          type: 'sequence',
          name: 'seq',
          steps: [prompt('quick', { agent: 'fast' }), prompt('slow', { agent: 'slow' })],
        },
        { agents: { fast: { model: 'sim/haiku' }, slow: { model: 'sim/sonnet', simulate: { latencyMs: 10_000 } } } },
      ),
    );
    const { id } = res.json();
    await waitForEvent(t.app, id, (e) => e.type === 'agentPromptStart' && e.payload.node === 'slow');
    const cancel = await t.app.inject({ method: 'POST', url: `/v1/workflows/${id}/cancel` });
    expect(cancel.statusCode).toBe(202);
    const done = await waitForStatus(t.app, id, ['completed', 'failed', 'cancelled'], 3_000);
    expect(done.status).toBe('cancelled');
    const tree = done.tree as NodeJson;
    expect(findNode(tree, 'quick')?.status).toBe('completed');
    expect(findNode(tree, 'slow')?.status).toBe('cancelled');
    const ends = (await allEvents(t.app, id)).filter((e) => e.type === 'agentPromptEnd');
    const answered = ends.filter((e) => e.payload.error === undefined).map((e) => e.payload.node);
    expect(answered).toEqual(['quick']);
    expect(ends.find((e) => e.payload.node === 'slow')?.payload.error).toMatchObject({ code: 'CANCELLED' });
  });

  it('cancels a queued workflow that has not started: cancelled without any model call', async () => {
    // Its own manual clock: the busy workflow cannot finish by itself and free the only slot.
    const single = await buildTestApp({ MAX_RUNNING_WORKFLOWS: '1' }, { clock: createManualClock() });
    try {
      const slow = { agents: { a: { model: 'sim/sonnet', simulate: { latencyMs: 10_000 } } } };
      const busy = (await submit(single.app, definition(prompt('hog'), slow))).json().id;
      await waitForEvent(single.app, busy, (e) => e.type === 'agentPromptStart');
      const queued = (await submit(single.app, definition(prompt('waiting'), slow))).json().id;

      const cancel = await single.app.inject({ method: 'POST', url: `/v1/workflows/${queued}/cancel` });
      expect(cancel.statusCode).toBe(202);
      expect(cancel.json().cancelRequested).toBe(true);
      const done = await waitForStatus(single.app, queued, ['completed', 'failed', 'cancelled'], 3_000);
      expect(done.status).toBe('cancelled');
      const types = (await allEvents(single.app, queued)).map((e) => e.type);
      expect(types).not.toContain('agentPromptStart');

      await single.app.inject({ method: 'POST', url: `/v1/workflows/${busy}/cancel` });
      expect((await waitForStatus(single.app, busy, ['cancelled'], 3_000)).status).toBe('cancelled');
      // Cancelling it again: it is already terminal, which is a conflict, not a silent success.
      const again = await single.app.inject({ method: 'POST', url: `/v1/workflows/${queued}/cancel` });
      expect(again.statusCode).toBe(409);
      expect(again.json()).toMatchObject({
        code: 'WORKFLOW_TERMINAL',
        message: `workflow ${queued} is already cancelled`,
      });
    } finally {
      await single.close();
    }
  });

  it('answers 409 WORKFLOW_TERMINAL, naming the status, for a workflow that already ended', async () => {
    const id = (await submit(t.app, definition(prompt('done-already')))).json().id;
    expect((await waitForStatus(t.app, id, ['completed'], 3_000)).status).toBe('completed');
    const res = await t.app.inject({ method: 'POST', url: `/v1/workflows/${id}/cancel` });
    expect(res.statusCode).toBe(409);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toEqual({
      statusCode: 409,
      code: 'WORKFLOW_TERMINAL',
      error: 'Conflict',
      message: `workflow ${id} is already completed`,
    });
    // Nothing changed: the workflow is still completed and was not flagged for cancellation.
    expect((await t.app.inject({ method: 'GET', url: `/v1/workflows/${id}` })).json()).toMatchObject({
      status: 'completed',
      cancelRequested: false,
    });
  });

  it('answers 404 for an unknown workflow', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/v1/workflows/wf_doesnotexist/cancel' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ statusCode: 404, code: 'NOT_FOUND' });
  });
});

describe('cancellation and child workflows', () => {
  const parent = () =>
    definition(
      {
        type: 'workflow',
        name: 'sub',
        definition: { name: 'child', root: prompt('slow-child', { agent: 'slow' }) },
      },
      { agents: { slow: { model: 'sim/sonnet', simulate: { latencyMs: 10_000 } } } },
    );

  async function childOf(id: string): Promise<string> {
    const attached = await waitForEvent(t.app, id, (e) => e.type === 'childAttached');
    const childId = attached.payload.childWorkflowId as string;
    await waitForEvent(t.app, childId, (e) => e.type === 'agentPromptStart');
    return childId;
  }

  it('cascades a parent cancel to its running child', async () => {
    const { id } = (await submit(t.app, parent())).json();
    const childId = await childOf(id);
    await t.app.inject({ method: 'POST', url: `/v1/workflows/${id}/cancel` });
    expect((await waitForStatus(t.app, id, undefined, 3_000)).status).toBe('cancelled');
    expect((await waitForStatus(t.app, childId, undefined, 3_000)).status).toBe('cancelled');
  });

  it('fails (not cancels) the parent node when only the child is cancelled', async () => {
    const { id } = (await submit(t.app, parent())).json();
    const childId = await childOf(id);
    await t.app.inject({ method: 'POST', url: `/v1/workflows/${childId}/cancel` });
    expect((await waitForStatus(t.app, childId, undefined, 3_000)).status).toBe('cancelled');
    const done = await waitForStatus(t.app, id, undefined, 3_000);
    expect(done.status).toBe('failed');
    expect(done.error).toMatchObject({ code: 'CHILD_WORKFLOW_FAILED' });
  });
});
