import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorkflowDefinition } from '../../src/domain/definition.js';
import { seededRandom } from '../../src/metrics/selection.js';
import { buildTestApp, type TestApp, waitForStatus } from '../support/build-app.js';

/**
 * Reviewers are agents like any other (docs/workflows.md#review-nodes): a review node may name a
 * registered agent or select among reviewers, with the same versioning and handoff spans as a
 * prompt. sim models, each reviewer scripted to approve.
 */
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({}, { random: seededRandom(5) });
});
afterAll(async () => {
  await t.close();
});

const approves = (system: string) => ({
  model: 'sim/sonnet',
  role: 'review',
  system,
  simulate: {
    responses: Array.from({ length: 20 }, () => ({ json: { approved: true, concerns: [], severity: 'none' } })),
  },
});

async function register(name: string, config: Record<string, unknown>, method: 'POST' | 'PUT' = 'POST') {
  const res =
    method === 'POST'
      ? await t.app.inject({ method, url: '/v1/agents', payload: { name, config } })
      : await t.app.inject({ method, url: `/v1/agents/${name}`, payload: { config } });
  expect(res.statusCode, res.body).toBe(method === 'POST' ? 201 : 200);
}

const workflow = (reviewer: unknown, review: Record<string, unknown> = {}) => ({
  name: 'reviewed-fix',
  task: { type: 'bug_fix', complexity: 'simple' },
  agents: { dev: { model: 'sim/haiku', system: 'You fix bugs.' } },
  root: {
    type: 'sequence',
    name: 'main',
    steps: [
      { type: 'prompt', name: 'fix', agent: 'dev', user: 'Fix the bug' },
      { type: 'review', name: 'check', agent: reviewer, target: 'fix', mode: 'single', ...review },
    ],
  },
});

interface Handoff {
  type: string;
  to_agent: string;
  agent_version?: number;
  context_passed?: { reviewer?: number };
  selection?: { role: string; strategy: string; candidates: Array<{ agent: string; runs: number }> };
}

async function run(payload: Record<string, unknown>) {
  const res = await t.app.inject({ method: 'POST', url: '/v1/workflows', payload });
  expect(res.statusCode, res.body).toBe(202);
  const { id, traceId } = res.json() as { id: string; traceId: string };
  const done = await waitForStatus(t.app, id);
  const trace = (await t.app.inject({ method: 'GET', url: `/v1/traces/${traceId}` })).json() as { spans: Handoff[] };
  const handoff = trace.spans.find((s) => s.type === 'handoff_span' && s.context_passed?.reviewer === 1);
  // The stored definition: what the run, its resumes and its trace keep whatever the registry says later.
  const stored = await t.deps.store.getById(id);
  if (!stored) throw new Error(`workflow ${id} is not stored`);
  return { done, handoff, stored };
}

const reviewOf = (definition: WorkflowDefinition): { agent?: unknown } =>
  (definition.root as { steps: Array<{ agent: unknown }> }).steps[1] ?? {};

describe('reviewers are agents', () => {
  it('a review names a registered reviewer: its config is copied, its version is on the handoff span', async () => {
    await register('strict-reviewer', approves('You review strictly.'));
    await register('strict-reviewer', approves('You review very strictly.'), 'PUT');
    const { done, handoff, stored } = await run(workflow('strict-reviewer'));
    expect(done.status).toBe('completed');
    expect(done.output).toMatchObject({ decision: 'review_approved', approvals: 1 });
    expect(handoff).toMatchObject({ to_agent: 'strict-reviewer', agent_version: 2 });
    expect(reviewOf(stored.definition)).toMatchObject({ agent: 'strict-reviewer', resolved: { version: 2 } });
    expect(stored.definition.agents?.['strict-reviewer']?.system).toBe('You review very strictly.');
  });

  it('a review selects among reviewers (role review); the handoff span shows the selection', async () => {
    await register('lenient-reviewer', approves('You review kindly.'));
    const select = {
      select: { role: 'review', candidates: ['strict-reviewer', 'lenient-reviewer'], strategy: 'greedy' },
    };
    const { done, handoff, stored } = await run(workflow(select));
    expect(done.status).toBe('completed');
    expect(handoff?.selection).toMatchObject({ role: 'review', strategy: 'greedy' });
    expect(handoff?.selection?.candidates.map((c) => c.agent)).toEqual(['strict-reviewer', 'lenient-reviewer']);
    const chosen = reviewOf(stored.definition).agent;
    expect(handoff?.to_agent).toBe(chosen);
    expect(handoff?.agent_version).toBe(chosen === 'strict-reviewer' ? 2 : 1);
    // The reviewer's use counts for later selections like a prompt's.
    const before = handoff?.selection?.candidates.find((c) => c.agent === chosen)?.runs ?? -1;
    const again = await run(workflow(select));
    expect(again.handoff?.selection?.candidates.find((c) => c.agent === chosen)?.runs).toBe(before + 1);
  });

  it('refuses a selection of another role, an unknown reviewer and a `resolved` sent by the client', async () => {
    const post = (payload: Record<string, unknown>) => t.app.inject({ method: 'POST', url: '/v1/workflows', payload });
    const wrongRole = await post(workflow({ select: { role: 'development', candidates: ['lenient-reviewer'] } }));
    expect(wrongRole.statusCode).toBe(400);
    expect(wrongRole.json().message).toBe('root.steps.1.agent.select.role: must be "review" for a review node');
    const unknown = await post(workflow('nobody'));
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().message).toBe(
      'root.steps.1.agent: unknown agent "nobody": not in agents and not a registered agent',
    );
    const resolved = await post(workflow('lenient-reviewer', { resolved: { version: 1 } }));
    expect(resolved.statusCode).toBe(400);
    expect(resolved.json().message).toBe('root.steps.1.resolved: is set by the service at submission; remove it');
  });
});
