import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allEvents, type Json } from '../support/api-fixtures.js';
import { buildTestApp, type TestApp, waitForStatus } from '../support/build-app.js';

/**
 * The review node through the real app (docs/design.md#complexity-allocation-selection-and-review): three simulated
 * reviewers scripted with
 * `simulate.responses`, the decision, the node's failure when blocked, and the outcome reward.
 */
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

const approve = { json: { approved: true, concerns: [], severity: 'none' } };
const reject = { json: { approved: false, concerns: ['divides by zero when the list is empty'], severity: 'major' } };

function reviewFlow(verdicts: Json[], extra: Json = {}): Json {
  return {
    name: 'review-acceptance',
    input: { code: 'const avg = (xs) => xs.reduce((a, b) => a + b) / xs.length;' },
    agents: {
      coder: { model: 'sim/sonnet', simulate: { responses: [{ text: 'const avg = (xs) => xs.length ? … : 0;' }] } },
      reviewer: { model: 'sim/sonnet', system: 'You review code.', simulate: { responses: verdicts } },
    },
    root: {
      type: 'sequence',
      name: 'main',
      steps: [
        { type: 'prompt', name: 'fix', agent: 'coder', user: 'Fix this code', data: { code: '{{input.code}}' } },
        { type: 'review', name: 'check-fix', agent: 'reviewer', target: 'fix', mode: 'standard', ...extra },
      ],
    },
    options: { cache: false },
  };
}

async function run(definition: Json) {
  const res = await t.app.inject({ method: 'POST', url: '/v1/workflows', payload: definition });
  expect(res.statusCode, res.body).toBe(202);
  const id = res.json().id as string;
  const workflow = await waitForStatus(t.app, id);
  const metrics = (await t.app.inject({ method: 'GET', url: `/v1/workflows/${id}/metrics` })).json();
  return { id, workflow, metrics, events: await allEvents(t.app, id) };
}

describe('review node, three simulated reviewers', () => {
  it('2 approve, 1 rejects: completes with review_approved, and the outcome reward is 1.0', async () => {
    const { workflow, metrics, events } = await run(reviewFlow([approve, reject, approve]));
    expect(workflow.status).toBe('completed');
    expect(workflow.output).toMatchObject({
      decision: 'review_approved',
      approvals: 2,
      rejections: 1,
      mode: 'standard',
    });
    expect((workflow.output as { verdicts: unknown[] }).verdicts).toHaveLength(3);
    expect(events.filter((e) => e.type === 'reviewVerdict')).toHaveLength(3);
    expect(events.find((e) => e.type === 'reviewEnd')?.payload).toMatchObject({
      decision: 'review_approved',
      approvals: 2,
      rejections: 1,
    });
    expect(metrics.efficiency).toMatchObject({ outcome: 'success', outcome_reason: 'review_approved' });
    expect(metrics.reward.outcome_reward).toBe(1);
  });

  it('2 reject: fails with REVIEW_BLOCKED, outcome review_blocked, reward −1', async () => {
    const { workflow, metrics, events } = await run(reviewFlow([reject, approve, reject]));
    expect(workflow.status).toBe('failed');
    expect(workflow.error).toMatchObject({ code: 'REVIEW_BLOCKED' });
    expect((workflow.error as { message: string }).message).toContain('1 approval(s), 2 rejection(s)');
    expect(events.find((e) => e.type === 'reviewEnd')?.payload).toMatchObject({ decision: 'review_blocked' });
    expect(metrics.efficiency).toMatchObject({ outcome: 'failure', outcome_reason: 'review_blocked' });
    expect(metrics.reward.outcome_reward).toBe(-1);
  });

  it('optional and blocked: the workflow completes, partial (tests_partial_pass)', async () => {
    const { workflow, metrics } = await run(reviewFlow([reject, reject, approve], { optional: true }));
    expect(workflow.status).toBe('completed');
    expect(metrics.efficiency).toMatchObject({ outcome: 'partial', outcome_reason: 'tests_partial_pass' });
    expect(metrics.reward.outcome_reward).toBe(0);
  });

  it('without a review the same workflow scores less than 1.0', async () => {
    const definition = reviewFlow([]);
    (definition.root as { steps: Json[] }).steps.pop();
    const { workflow, metrics } = await run(definition);
    expect(workflow.status).toBe('completed');
    expect(metrics.reward.outcome_reward).toBeLessThan(1);
  });

  it('rejects at submission a target that is not an earlier step, and an unknown agent', async () => {
    const bad = reviewFlow([]);
    const steps = (bad.root as { steps: Json[] }).steps;
    steps.reverse();
    const res = await t.app.inject({ method: 'POST', url: '/v1/workflows', payload: bad });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toContain('root.steps.0.target: step "fix" does not complete before this node');

    // An unknown reviewer is refused while agents are settled (as a prompt's is), before the node's checks.
    const unknown = reviewFlow([], { agent: 'nobody', target: 'missing' });
    const res2 = await t.app.inject({ method: 'POST', url: '/v1/workflows', payload: unknown });
    expect(res2.statusCode).toBe(400);
    expect(res2.json().message).toBe(
      'root.steps.1.agent: unknown agent "nobody": not in agents and not a registered agent',
    );
    const missing = reviewFlow([], { target: 'missing' });
    const res3 = await t.app.inject({ method: 'POST', url: '/v1/workflows', payload: missing });
    expect(res3.statusCode).toBe(400);
    expect((res3.json().details as Array<{ path: string }>).map((d) => d.path)).toContain('root.steps.1.target');
  });
});
