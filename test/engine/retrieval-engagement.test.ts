import { describe, expect, it } from 'vitest';
import { useOpenAiTestApp, waitForStatus } from '../support/build-app.js';
import { seedCorpus } from '../support/corpus-fixture.js';
import type { RecordedRequest } from '../support/fake-anthropic.js';
import { chatText } from '../support/fake-openai.js';

/**
 * Engagement analytics and the engagement guard (docs/design.md#agent-tools), with the seed pilot's numbers: two
 * scripted models run the same three tasks, one retrieving 2, 2 and 3 times (2.33 a task), one 1, 1
 * and 2 (1.33): the second is −43% against the first. With `guard: {auto: true}` the under-engaging
 * model is refused its early finalizes; its policy retrieves again when told so, and the gap narrows.
 */

type ChatMessage = { role: string; content: string | null };
type Json = Record<string, unknown>;

const app = useOpenAiTestApp();

/** Retrievals each model makes on its own, per task. */
const POLICY: Record<string, number[]> = { 'gpt-eager': [2, 2, 3], 'gpt-shy': [1, 1, 2] };

function policy(request: RecordedRequest) {
  const body = request.body as { model: string; messages: ChatMessage[] };
  const user = body.messages.filter((m) => m.role === 'user');
  const task = Number(/Task (\d)/.exec(user[0]?.content ?? '')?.[1] ?? 1);
  const retrieved = user.filter((m) => m.content?.startsWith('<retrieval_results')).length;
  const toldTooEarly = user.at(-1)?.content?.startsWith('You finalized after') === true;
  const wanted = POLICY[body.model]?.[task - 1] ?? 1;
  const reply = (value: Json) => ({ body: chatText(JSON.stringify(value)) });
  if (toldTooEarly || retrieved < wanted)
    return reply({ action: 'retrieve', query: `Danube river cities task ${task}` });
  return reply({ action: 'finalize', response: 'The Danube passes Vienna, Budapest and Belgrade.' });
}

async function runTask(model: string, task: number, guard?: Json): Promise<string> {
  const res = await app.t.app.inject({
    method: 'POST',
    url: '/v1/workflows',
    payload: {
      name: `task-${task}`,
      task: { type: 'research' },
      agents: { reader: { model: `openai/${model}` } },
      root: {
        type: 'prompt',
        name: 'answer',
        agent: 'reader',
        user: `Task ${task}: which cities does the Danube pass?`,
        retrieval: { corpus: 'rivers', mode: 'json-actions', ...(guard ? { guard } : {}) },
      },
      options: { cache: false },
    },
  });
  expect(res.statusCode, res.body).toBe(202);
  const id = res.json().id as string;
  expect((await waitForStatus(app.t.app, id)).status).toBe('completed');
  return id;
}

async function analytics(query = 'taskType=research&reference=openai/gpt-eager') {
  const res = await app.t.app.inject({ url: `/v1/analytics/retrieval?${query}` });
  expect(res.statusCode, res.body).toBe(200);
  const body = res.json() as { reference: string; models: Array<Json & { model: string }> };
  const of = (model: string) => body.models.find((m) => m.model === `openai/${model}`) as Json;
  return { body, eager: of('gpt-eager'), shy: of('gpt-shy') };
}

describe('retrieval engagement and the guard', () => {
  it('reports the under-engaging model at −43%, then guards it and the gap narrows', async () => {
    await seedCorpus(app.t.app, 'rivers');
    app.fake.setDefault(policy);
    for (const task of [1, 2, 3]) {
      await runTask('gpt-eager', task);
      await runTask('gpt-shy', task);
    }
    const before = await analytics();
    expect(before.body.reference).toBe('openai/gpt-eager');
    expect(before.eager).toMatchObject({ runs: 3, mean_retrieval_calls: 2.3333, mean_steps: 3.3333, gap: 0 });
    expect(before.shy).toMatchObject({
      runs: 3,
      mean_retrieval_calls: 1.3333,
      mean_steps: 2.3333,
      loop_exhausted_rate: 0,
      gap: -0.4286,
      gap_percent: -43,
      guard_interventions: 0,
      with_guard: null,
    });
    expect(before.shy.mean_outcome_reward).toEqual(expect.any(Number));

    // The same tasks again with the auto guard: only the shy model is under −30%, so only it is guarded.
    const guarded: string[] = [];
    for (const task of [1, 2, 3]) {
      await runTask('gpt-eager', task, { auto: true });
      guarded.push(await runTask('gpt-shy', task, { auto: true }));
    }
    const interventions = [];
    for (const id of guarded) {
      const events = (await app.t.app.inject({ url: `/v1/workflows/${id}/events?limit=1000` })).json().items as Array<{
        type: string;
        payload: Json;
      }>;
      interventions.push(...events.filter((e) => e.type === 'guardIntervention').map((e) => e.payload));
    }
    // Tasks 1 and 2: one retrieval, refused once (minCalls = round(2.33) = 2), then a second one.
    expect(interventions).toEqual([
      expect.objectContaining({ model: 'openai/gpt-shy', retrievals: 1, minCalls: 2, turnsLeft: 3, auto: true }),
      expect.objectContaining({ model: 'openai/gpt-shy', retrievals: 1, minCalls: 2, turnsLeft: 3, auto: true }),
    ]);
    const guardText = app.fake.requests
      .flatMap((r) => (r.body as { messages: ChatMessage[] }).messages)
      .find((m) => m.content?.startsWith('You finalized after'))?.content;
    expect(guardText).toBe('You finalized after 1 retrievals; at least 2 are expected. You have 3 turns left.');

    const after = await analytics();
    expect(after.shy).toMatchObject({ runs: 6, guard_interventions: 2 });
    expect(after.shy.with_guard).toMatchObject({ runs: 3, mean_retrieval_calls: 2, guard_interventions: 2 });
    expect(after.shy.without_guard).toMatchObject({ runs: 3, mean_retrieval_calls: 1.3333 });
    // The eager model was never guarded: auto found nothing to correct.
    expect(after.eager).toMatchObject({ runs: 6, guard_interventions: 0, with_guard: null });
    expect(after.shy.gap as number).toBeGreaterThan(before.shy.gap as number);
    expect(after.shy.gap_percent).toBe(-29);
  });

  it('makes `retrieve` Tier 2 in the description audit while a model under-engages (here at −29% overall: not)', async () => {
    const tierOfRetrieve = async () => {
      const listed = (await app.t.app.inject({ url: '/v1/tools' })).json() as {
        items: Array<{ definition: { name: string }; audit: { tier: number } }>;
      };
      return listed.items.find((i) => i.definition.name === 'retrieve')?.audit.tier;
    };
    // After the guard the shy model is at −29%: no longer more than 30% below, so Tier 0.
    expect(await tierOfRetrieve()).toBe(0);
    // Three more unguarded runs of the shy model bring it back under −30% overall (1.56 against 2.33).
    for (const task of [1, 2, 3]) await runTask('gpt-shy', task);
    expect(await tierOfRetrieve()).toBe(2);
    const audited = await app.t.app.inject({
      method: 'POST',
      url: '/v1/tools/audit',
      payload: {
        tools: [
          { name: 'retrieve', description: 'Search the corpus.', input_schema: { type: 'object' } },
          { name: 'other', description: 'Do a thing.', input_schema: { type: 'object' } },
        ],
      },
    });
    expect(audited.json().tools.map((t: { tool: string; tier: number }) => [t.tool, t.tier])).toEqual([
      ['retrieve', 2],
      ['other', 0],
    ]);
  });

  it('counts per task first: a workflow with two retrieval prompts is one task of two runs', async () => {
    app.fake.setDefault(policy);
    const prompt = (name: string) => ({
      type: 'prompt',
      name,
      agent: 'reader',
      user: 'Task 3: which cities does the Danube pass?',
      retrieval: { corpus: 'rivers', mode: 'json-actions' },
    });
    const res = await app.t.app.inject({
      method: 'POST',
      url: '/v1/workflows',
      payload: {
        name: 'twice',
        task: { type: 'twice' },
        agents: { reader: { model: 'openai/gpt-eager' } },
        root: { type: 'sequence', name: 'main', steps: [prompt('first'), prompt('second')] },
        options: { cache: false },
      },
    });
    expect(res.statusCode, res.body).toBe(202);
    expect((await waitForStatus(app.t.app, res.json().id)).status).toBe('completed');
    const { eager } = await analytics('taskType=twice');
    // gpt-eager retrieves 3 times on task 3, in each prompt: 6 per task, 3 per run.
    expect(eager).toMatchObject({ tasks: 1, mean_retrieval_calls_per_task: 6, runs: 2, mean_retrieval_calls: 3 });
    expect(Object.keys(eager).slice(0, 4)).toEqual([
      'model',
      'tasks',
      'mean_retrieval_calls_per_task',
      'mean_steps_per_task',
    ]);
  });

  it('validates its query; a task type without runs has no models', async () => {
    expect((await app.t.app.inject({ url: '/v1/analytics/retrieval?from=yesterday' })).statusCode).toBe(400);
    expect((await app.t.app.inject({ url: '/v1/analytics/retrieval?task_type=x' })).statusCode).toBe(400);
    const empty = await analytics('taskType=never-ran');
    expect(empty.body.models).toEqual([]);
  });
});
