import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allEvents, definition, findNode, type NodeJson, prompt, submit } from '../support/api-fixtures.js';
import { buildTestApp, quickStartExample, type TestApp, waitForStatus } from '../support/build-app.js';
import { createManualClock, settleEventLoop } from '../support/manual-clock.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => {
  await t.close();
});

describe('POST /v1/workflows: the quick-start example', () => {
  it('is accepted with 202 + Location, completes, and the text tree shows every node ✓', async () => {
    const res = await submit(t.app, quickStartExample);
    expect(res.statusCode).toBe(202);
    const body = res.json();
    expect(body).toMatchObject({ id: expect.stringMatching(/^wf_/), traceId: expect.stringMatching(/^trace_/) });
    expect(res.headers.location).toBe(`/v1/workflows/${body.id}`);
    expect(body.links).toEqual({
      self: `/v1/workflows/${body.id}`,
      tree: `/v1/workflows/${body.id}/tree`,
      events: `/v1/workflows/${body.id}/events`,
      cancel: `/v1/workflows/${body.id}/cancel`,
      reflections: `/v1/workflows/${body.id}/reflections`,
      metrics: `/v1/workflows/${body.id}/metrics`,
      trace: `/v1/traces/${body.traceId}`,
    });

    const done = await waitForStatus(t.app, body.id);
    expect(done.status).toBe('completed');
    expect(done.endedAt).toMatch(/Z$/);
    expect(typeof done.durationMs).toBe('number');

    const tree = await t.app.inject({ method: 'GET', url: `/v1/workflows/${body.id}/tree?format=text` });
    expect(tree.statusCode).toBe(200);
    expect(tree.headers['content-type']).toMatch(/^text\/plain/);
    expect(tree.body).toBe(
      [
        '✓ review-pr [completed]',
        '  ✓ main [completed]',
        '    ✓ find-bugs [completed]',
        '    ✓ fixes [completed]',
        '      ✓ fix-a [completed]',
        '      ✓ fix-b [completed]',
        '',
      ].join('\n'),
    );

    const json = await t.app.inject({ method: 'GET', url: `/v1/workflows/${body.id}/tree` });
    expect(json.statusCode).toBe(200);
    expect(json.json()).toMatchObject({ id: body.id, name: 'review-pr', status: 'completed', tree: { name: 'main' } });
  });

  it('renders {{input.code}} into the data block and {{steps.find-bugs.output}} into later prompts', async () => {
    const scripted = structuredClone(quickStartExample) as unknown as {
      agents: { analyst: Record<string, unknown> };
    };
    scripted.agents.analyst.simulate = { responses: [{ json: { bugs: ['off-by-one in loop'], severity: 'high' } }] };
    const res = await submit(t.app, scripted);
    expect(res.statusCode).toBe(202);
    const { id } = res.json();
    expect((await waitForStatus(t.app, id)).status).toBe('completed');

    const starts = (await allEvents(t.app, id)).filter((e) => e.type === 'agentPromptStart');
    const promptOf = (node: string) => starts.find((e) => e.payload.node === node)?.payload.prompt;
    expect(promptOf('find-bugs')).toBe(
      'Analyze this code for bugs\n\n<code>\n"function foo() { return 42; }"\n</code>',
    );
    expect(promptOf('fix-a')).toBe('Propose a fix for: {"bugs":["off-by-one in loop"],"severity":"high"}');
    expect(promptOf('fix-b')).toBe('Propose a test for: {"bugs":["off-by-one in loop"],"severity":"high"}');

    const view = (await t.app.inject({ method: 'GET', url: `/v1/workflows/${id}` })).json();
    expect(findNode(view.tree, 'find-bugs')?.output).toEqual({ bugs: ['off-by-one in loop'], severity: 'high' });
  });
});

describe('node kinds', () => {
  it('runs a single prompt node; its output is the workflow output', async () => {
    const res = await submit(
      t.app,
      definition(prompt('only', { agent: 'a' }), {
        agents: { a: { model: 'sim/haiku', simulate: { responses: [{ text: 'hello there' }] } } },
      }),
    );
    const done = await waitForStatus(t.app, res.json().id);
    expect(done).toMatchObject({ status: 'completed', output: 'hello there' });
  });

  it('runs a sequence in order; its output is the last step output', async () => {
    const res = await submit(
      t.app,
      definition(
        {
          type: 'sequence',
          name: 'seq',
          steps: [prompt('one'), prompt('two', { user: 'after {{steps.one.output}}' })],
        },
        { agents: { a: { model: 'sim/sonnet', simulate: { responses: [{ text: 'first' }, { text: 'second' }] } } } },
      ),
    );
    const done = await waitForStatus(t.app, res.json().id);
    expect(done).toMatchObject({ status: 'completed', output: 'second' });
    const starts = (await allEvents(t.app, res.json().id))
      .filter((e) => e.type === 'stepStart')
      .map((e) => e.payload.node);
    expect(starts).toEqual(['seq', 'one', 'two']);
  });

  it('runs parallel branches concurrently: both calls start before either ends; two 300 ms steps take 300 ms', async () => {
    // On a manual clock: the simulated latency elapses only when the test advances time (the one
    // real-time version of this check is test/engine/parallel-smoke.timing.test.ts).
    const clock = createManualClock();
    const timed = await buildTestApp({}, { clock });
    try {
      const res = await submit(
        timed.app,
        definition(
          { type: 'parallel', name: 'fan', steps: [prompt('left'), prompt('right')] },
          { agents: { a: { model: 'sim/sonnet', simulate: { latencyMs: 300 } } } },
        ),
      );
      const { id } = res.json();
      await settleEventLoop();
      // Both simulated calls are waiting out their latency at the same time, neither has answered.
      expect(clock.pending.filter((sleep) => sleep.ms === 300)).toHaveLength(2);
      await clock.advance(300);
      const done = await waitForStatus(timed.app, id);
      expect(done.status).toBe('completed');
      expect(Object.keys(done.output as object).sort()).toEqual(['left', 'right']);
      // One latency of clock time for both: in sequence they would take 600 ms.
      expect(done.durationMs).toBe(300);
      const calls = (await allEvents(timed.app, id))
        .filter((e) => e.type === 'agentPromptStart' || e.type === 'agentPromptEnd')
        .map((e) => e.type);
      expect(calls).toEqual(['agentPromptStart', 'agentPromptStart', 'agentPromptEnd', 'agentPromptEnd']);
    } finally {
      await timed.close();
    }
  });

  it('runs a child workflow: visible on its own and nested in the parent tree', async () => {
    const res = await submit(
      t.app,
      definition({
        type: 'sequence',
        name: 'outer',
        steps: [
          prompt('before'),
          {
            type: 'workflow',
            name: 'sub',
            definition: { name: 'child-flow', root: { type: 'sequence', name: 'inner', steps: [prompt('deep')] } },
          },
        ],
      }),
    );
    const parentId = res.json().id;
    const parent = await waitForStatus(t.app, parentId);
    expect(parent.status).toBe('completed');

    const sub = findNode(parent.tree as NodeJson, 'sub');
    expect(sub?.type).toBe('workflow');
    expect(sub?.childWorkflowId).toMatch(/^wf_/);
    expect(sub?.children.map((c) => c.name)).toEqual(['inner']);
    expect(findNode(sub as NodeJson, 'deep')?.status).toBe('completed');

    const child = await t.app.inject({ method: 'GET', url: `/v1/workflows/${sub?.childWorkflowId}` });
    expect(child.statusCode).toBe(200);
    expect(child.json()).toMatchObject({ name: 'child-flow', status: 'completed', parentWorkflowId: parentId });

    const children = await t.app.inject({ method: 'GET', url: `/v1/workflows?parentWorkflowId=${parentId}` });
    expect(children.json().items.map((w: { id: string }) => w.id)).toEqual([sub?.childWorkflowId]);

    const text = await t.app.inject({ method: 'GET', url: `/v1/workflows/${parentId}/tree?format=text` });
    expect(text.body).toBe(
      [
        '✓ test-flow [completed]',
        '  ✓ outer [completed]',
        '    ✓ before [completed]',
        '    ✓ sub [completed]',
        '      ✓ inner [completed]',
        '        ✓ deep [completed]',
        '',
      ].join('\n'),
    );
  });
});

describe('idempotency', () => {
  it('replays the same body with 200 and the same id; a different body is a 422', async () => {
    const headers = { 'idempotency-key': 'order-42 retry' };
    const body = definition(prompt('idem'), { correlationId: 'idem-test' });
    const first = await submit(t.app, body, headers);
    expect(first.statusCode).toBe(202);
    const again = await submit(t.app, body, headers);
    expect(again.statusCode).toBe(200);
    expect(again.json().id).toBe(first.json().id);
    expect(again.headers.location).toBe(`/v1/workflows/${first.json().id}`);

    const other = await submit(t.app, definition(prompt('idem-changed')), headers);
    expect(other.statusCode).toBe(422);
    expect(other.json()).toMatchObject({ statusCode: 422, code: 'IDEMPOTENCY_KEY_REUSED' });

    const listed = await t.app.inject({ method: 'GET', url: '/v1/workflows?correlationId=idem-test' });
    expect(listed.json().items).toHaveLength(1);
  });

  it('rejects a malformed Idempotency-Key with 400', async () => {
    const res = await submit(t.app, definition(prompt('x')), { 'idempotency-key': 'k'.repeat(201) });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ path: 'headers.idempotency-key' }] });
  });
});

describe('GET /v1/workflows', () => {
  it('pages 25 workflows by 10: three pages, newest first, no duplicates', async () => {
    const created: string[] = [];
    for (let i = 0; i < 25; i++) {
      const res = await submit(t.app, definition(prompt(`p${i}`), { correlationId: 'paging' }));
      created.push(res.json().id);
    }
    const seen: string[] = [];
    const sizes: number[] = [];
    let cursor: string | null = null;
    do {
      const query: string = `correlationId=paging&limit=10${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const res = await t.app.inject({ method: 'GET', url: `/v1/workflows?${query}` });
      expect(res.statusCode).toBe(200);
      const page = res.json() as { items: Array<{ id: string; links: { self: string } }>; nextCursor: string | null };
      sizes.push(page.items.length);
      seen.push(...page.items.map((w) => w.id));
      cursor = page.nextCursor;
    } while (cursor !== null && sizes.length < 10);
    expect(sizes).toEqual([10, 10, 5]);
    expect(new Set(seen).size).toBe(25);
    expect(seen).toEqual([...created].reverse());
  });

  it('filters by status and validates the query', async () => {
    const ok = await t.app.inject({ method: 'GET', url: '/v1/workflows?status=completed&limit=100' });
    expect(ok.statusCode).toBe(200);
    for (const w of ok.json().items) expect(w.status).toBe('completed');

    const bad = await t.app.inject({ method: 'GET', url: '/v1/workflows?limit=0' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ path: 'querystring.limit' }] });
    expect(bad.json().message).toContain('querystring.limit');

    const status = await t.app.inject({ method: 'GET', url: '/v1/workflows?status=done' });
    expect(status.statusCode).toBe(400);
    expect(status.json().details[0].path).toBe('querystring.status');
  });
});
