import { describe, expect, it } from 'vitest';
import { findNode, type NodeJson, severity, submit } from '../support/api-fixtures.js';
import { useAnthropicTestApp, waitForStatus } from '../support/build-app.js';
import { createManualClock } from '../support/manual-clock.js';

/**
 * Reflection by hand on a manual clock (docs/workflows.md#reflection): a reopened workflow gets its whole
 * timeout again from the request, and a service shutting down refuses new requests with 503.
 */
const clock = createManualClock();
const app = useAnthropicTestApp({ overrides: { clock } });

async function failedWorkflow(name: string) {
  const res = await submit(app.t.app, {
    name,
    agents: { a: { model: 'sim/sonnet', simulate: { responses: [{ json: { severity: 'catastrophic' } }] } } },
    root: { type: 'prompt', name: 'rate', agent: 'a', user: `Rate ${name}`, responseFormat: severity },
    options: { cache: false, timeoutMs: 1_000 },
  });
  const id = res.json().id as string;
  const done = await waitForStatus(app.t.app, id);
  expect(done.status).toBe('failed');
  return { id, rate: findNode(done.tree as NodeJson, 'rate')?.id as string };
}

describe('reflection by hand, on the clock', () => {
  it('restarts the workflow deadline from the request', async () => {
    const { id, rate } = await failedWorkflow('late');
    // Long past the workflow's 1 s timeout, counted from its start.
    await clock.advance(60_000);
    const res = await app.t.app.inject({ method: 'POST', url: `/v1/workflows/${id}/nodes/${rate}/reflect` });
    expect(res.statusCode).toBe(202);
    const done = await waitForStatus(app.t.app, id);
    expect(done.error ?? null).toBeNull();
    expect(done.status).toBe('completed');
  });

  it('answers 503 once the service is shutting down, and leaves the workflow failed', async () => {
    const { id, rate } = await failedWorkflow('stopping');
    await app.t.deps.executor.shutdown(0);
    const res = await app.t.app.inject({ method: 'POST', url: `/v1/workflows/${id}/nodes/${rate}/reflect` });
    expect(res.statusCode).toBe(503);
    const view = await app.t.app.inject({ method: 'GET', url: `/v1/workflows/${id}` });
    expect(view.json().status).toBe('failed');
  });
});
