import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allEvents, waitForEvent } from '../support/api-fixtures.js';
import { buildTestApp, type TestApp, waitForStatus } from '../support/build-app.js';

/**
 * Human checkpoints (docs/design.md#complexity-allocation-selection-and-review): a critical workflow waits, idle,
 * until a person approves or rejects it.
 */
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

async function submit(task: Record<string, unknown>): Promise<string> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/v1/workflows',
    payload: {
      name: 'migrate-billing',
      task: { type: 'migration', ...task },
      agents: { dev: { model: 'sim/haiku' } },
      root: { type: 'prompt', name: 'plan', agent: 'dev', user: 'Plan the billing migration.' },
    },
  });
  expect(res.statusCode, res.body).toBe(202);
  return res.json().id;
}

const post = (url: string, payload?: unknown) =>
  t.app.inject({ method: 'POST', url, ...(payload === undefined ? {} : { payload: payload as object }) });

describe('human checkpoint', () => {
  it('holds a critical workflow idle with a checkpoint event until it is approved, then runs it', async () => {
    const id = await submit({ complexity: 'critical' });
    await waitForEvent(t.app, id, (e) => e.type === 'checkpoint');
    const waiting = (await t.app.inject({ url: `/v1/workflows/${id}` })).json();
    expect(waiting).toMatchObject({ status: 'idle', checkpoint: { state: 'pending', reason: null, at: null } });
    expect((await allEvents(t.app, id)).map((e) => e.type)).toEqual(['checkpoint']);

    const approved = await post(`/v1/workflows/${id}/approve`, { note: 'looks fine' });
    expect(approved.statusCode, approved.body).toBe(202);
    expect(approved.json().checkpoint).toMatchObject({ state: 'approved', reason: 'looks fine' });
    const done = await waitForStatus(t.app, id);
    expect(done.status).toBe('completed');
    const events = await allEvents(t.app, id);
    expect(events.filter((e) => e.type === 'checkpoint').map((e) => e.payload)).toEqual([
      {
        state: 'pending',
        complexity: 'critical',
        reason: 'critical complexity: POST /v1/workflows/{id}/approve or …/reject',
      },
      { state: 'approved', complexity: 'critical', reason: 'looks fine' },
    ]);
    expect(events.findIndex((e) => e.type === 'agentPromptStart')).toBeGreaterThan(1);
    // Decided once: a second answer is a conflict.
    const again = await post(`/v1/workflows/${id}/approve`);
    expect(again.statusCode).toBe(409);
    expect(again.json().message).toBe(`workflow ${id} is not waiting for approval: it was already approved`);
  });

  it('fails a rejected workflow with the reason, without a model call', async () => {
    const id = await submit({ signals: ['architecture', 'security', 'system_wide'] });
    await waitForEvent(t.app, id, (e) => e.type === 'checkpoint');
    expect((await post(`/v1/workflows/${id}/reject`, {})).statusCode).toBe(400);
    const rejected = await post(`/v1/workflows/${id}/reject`, { reason: 'not during the freeze' });
    expect(rejected.statusCode).toBe(202);
    const done = await waitForStatus(t.app, id);
    expect(done).toMatchObject({
      status: 'failed',
      error: { code: 'CHECKPOINT_REJECTED', message: 'rejected at the human checkpoint: not during the freeze' },
    });
    expect((await allEvents(t.app, id)).some((e) => e.type === 'agentPromptStart')).toBe(false);
  });

  it('lets a waiting workflow be cancelled, and answers 409 for one without a checkpoint', async () => {
    const waiting = await submit({ complexity: 'critical' });
    await waitForEvent(t.app, waiting, (e) => e.type === 'checkpoint');
    expect((await post(`/v1/workflows/${waiting}/cancel`)).statusCode).toBe(202);
    expect((await waitForStatus(t.app, waiting)).status).toBe('cancelled');

    const plain = await submit({ complexity: 'complex' });
    expect((await waitForStatus(t.app, plain)).status).toBe('completed');
    const res = await post(`/v1/workflows/${plain}/approve`);
    expect(res.statusCode).toBe(409);
    expect(res.json().message).toContain('it has no checkpoint');
    expect((await post('/v1/workflows/wf_missing/approve')).statusCode).toBe(404);
  });
});
