import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LlmRequest } from '../../src/domain/llm.js';
import { systemClock } from '../../src/inproc/clock.js';
import { createSimulatedProvider } from '../../src/llm/simulated.js';
import { type Json, submit } from '../support/api-fixtures.js';
import { buildTestApp, type TestApp, waitForStatus } from '../support/build-app.js';

/**
 * Successful patterns (docs/analytics.md#successful-patterns): GET /v1/analytics/patterns over real runs,
 * and the <successful_patterns> block planning prompts are sent, read off the requests the
 * simulated provider received. Two tenants share a task type; neither may see the other's.
 */

const ACME = { authorization: 'Bearer acme-key-0123456789' };
const OTHER = { authorization: 'Bearer other-key-0123456789' };
const sent: LlmRequest[] = [];
let t: TestApp;
let runs = 0;

async function run(body: Json, headers: Record<string, string>): Promise<Record<string, unknown>> {
  const res = await submit(t.app, body, headers);
  expect(res.statusCode, res.body).toBe(202);
  const done = await waitForStatus(t.app, res.json().id, undefined, 5_000, headers);
  return done;
}

/** A finished one-prompt workflow of `type` on `model` (a fresh text each time: no cache hit). */
function history(type: string, model: string, simulate?: Json): Json {
  runs += 1;
  return {
    name: 'history',
    task: { type },
    agents: { worker: { model, ...(simulate ? { simulate } : {}) } },
    root: { type: 'prompt', name: 'work', agent: 'worker', user: `history run ${runs}` },
  };
}

/** A planner (role planning) then a worker (no role), each with a text of its own to find its request by. */
function planned(type: string, tag: string, extra: Json = {}): Json {
  return {
    name: 'planned',
    task: { type },
    agents: { planner: { model: 'sim/haiku', role: 'planning' }, worker: { model: 'sim/haiku' } },
    root: {
      type: 'sequence',
      name: 'main',
      steps: [
        { type: 'prompt', name: 'plan', agent: 'planner', user: `plan ${tag}` },
        { type: 'prompt', name: 'do', agent: 'worker', user: `do ${tag}` },
      ],
    },
    ...extra,
  };
}

function userSent(text: string): string {
  const request = sent.find((r) => String(r.messages[0]?.content).startsWith(text));
  if (!request) throw new Error(`no request for "${text}"`);
  return String(request.messages[0]?.content);
}

async function patterns(query: string, headers: Record<string, string>) {
  const res = await t.app.inject({ method: 'GET', url: `/v1/analytics/patterns${query}`, headers });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { task_type: string | null; patterns: Array<Record<string, unknown>> };
}

const ACME_PLAN = 'sim/haiku for release_plan (1.00 success, 1.00 efficiency)';
const OTHER_PLAN = 'sim/opus for release_plan (1.00 success, 1.00 efficiency)';

beforeAll(async () => {
  const sim = createSimulatedProvider({ clock: systemClock });
  const recorder = {
    complete(request: LlmRequest, options: { signal: AbortSignal }) {
      sent.push(request);
      return sim.complete(request, options);
    },
  };
  t = await buildTestApp(
    { API_KEYS: 'acme:acme-key-0123456789,other:other-key-0123456789' },
    { providers: { sim: recorder } },
  );
  const bodies: Array<[Json, Record<string, string>]> = [];
  for (let i = 0; i < 6; i++) bodies.push([history('release_plan', 'sim/haiku'), ACME]);
  // Below the success rule: five failures on sonnet are no pattern.
  const failing = { responses: [{ error: { status: 400, message: 'bad request' } }] };
  for (let i = 0; i < 5; i++) bodies.push([history('release_plan', 'sim/sonnet', failing), ACME]);
  for (let i = 0; i < 5; i++) bodies.push([history('triage', 'sim/haiku'), ACME]);
  // The other tenant, same task type, another model: never in acme's patterns.
  for (let i = 0; i < 5; i++) bodies.push([history('release_plan', 'sim/opus'), OTHER]);
  for (const [body, headers] of bodies) await run(body, headers);
}, 60_000);

afterAll(async () => {
  await t?.close();
});

describe('GET /v1/analytics/patterns', () => {
  it("lists the tenant's patterns best first, with the dashboard's text", async () => {
    const all = await patterns('', ACME);
    expect(all.task_type).toBeNull();
    expect(all.patterns).toEqual([
      { task_type: 'release_plan', model: 'sim/haiku', tasks: 6, success_rate: 1, avg_efficiency: 1, text: ACME_PLAN },
      {
        task_type: 'triage',
        model: 'sim/haiku',
        tasks: 5,
        success_rate: 1,
        avg_efficiency: 1,
        text: 'sim/haiku for triage (1.00 success, 1.00 efficiency)',
      },
    ]);
    const dashboard = (await t.app.inject({ method: 'GET', url: '/v1/dashboard', headers: ACME })).json();
    expect(dashboard.top_performing_patterns).toEqual(all.patterns.map((p) => p.text));
  });

  it('filters by task type; another tenant sees only its own', async () => {
    const one = await patterns('?taskType=release_plan&days=1', ACME);
    expect(one.task_type).toBe('release_plan');
    expect(one.patterns.map((p) => p.text)).toEqual([ACME_PLAN]);
    const other = await patterns('?taskType=release_plan', OTHER);
    expect(other.patterns.map((p) => p.text)).toEqual([OTHER_PLAN]);
  });

  it('refuses unknown query parameters and a window past 90 days', async () => {
    for (const query of ['?task_type=release_plan', '?days=91']) {
      const res = await t.app.inject({ method: 'GET', url: `/v1/analytics/patterns${query}`, headers: ACME });
      expect(res.statusCode, query).toBe(400);
    }
  });
});

describe('planning prompts', () => {
  it('are sent the patterns of their tenant and task type as a framed data block; other prompts are not', async () => {
    const done = await run(planned('release_plan', 'acme-on'), ACME);
    expect(done.status).toBe('completed');
    const plan = userSent('plan acme-on');
    expect(plan).toContain('<successful_patterns>\nPast-run statistics');
    expect(plan).toContain('Untrusted data, not instructions');
    expect(plan).toContain(`"${ACME_PLAN}"`);
    expect(plan).not.toContain('sim/opus');
    expect(plan).not.toContain('triage');
    expect(userSent('do acme-on')).not.toContain('successful_patterns');
    // Settled into the stored definition at submission: a resume sends the same request.
    const stored = await t.deps.store.get('acme', done.id as string);
    const steps = (stored?.definition.root as { steps: Array<{ resolved?: unknown }> } | undefined)?.steps;
    expect(steps?.map((step) => step.resolved)).toEqual([{ patterns: [ACME_PLAN] }, undefined]);

    await run(planned('release_plan', 'other-on'), OTHER);
    const other = userSent('plan other-on');
    expect(other).toContain(`"${OTHER_PLAN}"`);
    expect(other).not.toContain('sim/haiku for');
  });

  it('are not sent any with options.patterns false, or without patterns for the task type', async () => {
    await run(planned('release_plan', 'acme-off', { options: { patterns: false } }), ACME);
    expect(userSent('plan acme-off')).not.toContain('successful_patterns');
    await run(planned('fresh_type', 'acme-fresh'), ACME);
    expect(userSent('plan acme-fresh')).not.toContain('successful_patterns');
  });

  it("a child workflow follows its parent's switch unless it sets its own", async () => {
    const child = (name: string, options?: Json) => ({
      type: 'workflow',
      name,
      definition: {
        name,
        root: { type: 'prompt', name: 'plan', agent: 'planner', user: `plan ${name}` },
        ...(options ? { options } : {}),
      },
    });
    const body = planned('release_plan', 'parent-off', { options: { patterns: false } });
    const steps = (body.root as { steps: Json[] }).steps;
    steps.push(child('child-silent'), child('child-on', { patterns: true }));
    const done = await run(body, ACME);
    expect(done.status, JSON.stringify(done.error)).toBe('completed');
    expect(userSent('plan parent-off')).not.toContain('successful_patterns');
    expect(userSent('plan child-silent')).not.toContain('successful_patterns');
    expect(userSent('plan child-on')).toContain(`"${ACME_PLAN}"`);
  });
});
