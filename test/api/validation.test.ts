import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { definition, type Json, prompt, submit } from '../support/api-fixtures.js';
import { buildTestApp, quickStartExample, type TestApp } from '../support/build-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => {
  await t.close();
});

const seq = (...steps: Json[]): Json => ({ type: 'sequence', name: 'main', steps });

function nested(depth: number): Json {
  let node: Json = prompt('leaf');
  for (let i = 0; i < depth; i++) node = { type: 'sequence', name: `level-${i}`, steps: [node] };
  return node;
}

function childWorkflow(name: string): Json {
  return { type: 'workflow', name, definition: { name, root: prompt(`${name}-leaf`) } };
}

const manyPrompts = (prefix: string, n: number): Json[] => Array.from({ length: n }, (_, i) => prompt(`${prefix}${i}`));

/** [case, body, the field path the answer must name] */
const cases: Array<[string, unknown, string]> = [
  ['unknown top-level field', { ...definition(prompt('p')), colour: 'red' }, 'colour'],
  ['unknown field in a nested prompt', definition(seq(prompt('p', { temprature: 0.5 }))), 'root.steps.0.temprature'],
  ['bad characters in the workflow name', definition(prompt('p'), { name: 'review<script>' }), 'name'],
  ['".." in a node name', definition(seq(prompt('a..b'))), 'root.steps.0.name'],
  ['duplicate node names', definition(seq(prompt('twin'), prompt('twin'))), 'root.steps.1.name'],
  ['unknown agent', definition(seq(prompt('p', { agent: 'ghost' }))), 'root.steps.0.agent'],
  // Own properties only: Object.prototype's members are not agents.
  ['agent "constructor"', definition(seq(prompt('p', { agent: 'constructor' }))), 'root.steps.0.agent'],
  ['agent "toString"', definition(seq(prompt('p', { agent: 'toString' }))), 'root.steps.0.agent'],
  ['agent "__proto__"', definition(seq(prompt('p', { agent: '__proto__' }))), 'root.steps.0.agent'],
  [
    'template referencing a missing step',
    definition(seq(prompt('p', { user: 'use {{steps.nope.output}}' }))),
    'root.steps.0.user',
  ],
  [
    'template referencing a later step',
    definition(seq(prompt('first', { user: 'use {{steps.second.output}}' }), prompt('second'))),
    'root.steps.0.user',
  ],
  ['empty steps', definition(seq()), 'root.steps'],
  ['bad model string', definition(prompt('p'), { agents: { a: { model: 'gpt 4 turbo!' } } }), 'agents.a.model'],
  ['maxTurns 0', definition(seq(prompt('p', { maxTurns: 0 }))), 'root.steps.0.maxTurns'],
  ['oversize string', definition(seq(prompt('p', { user: 'x'.repeat(100_001) }))), 'root.steps.0.user'],
  [
    'too many nodes',
    definition(
      seq(
        { type: 'parallel', name: 'a', steps: manyPrompts('a', 150) },
        { type: 'parallel', name: 'b', steps: manyPrompts('b', 150) },
      ),
    ),
    'root',
  ],
  [
    'too many steps in one node',
    definition({ type: 'parallel', name: 'wide', steps: manyPrompts('w', 201) }),
    'root.steps',
  ],
  [
    'nesting too deep',
    definition(nested(10)),
    'root.steps.0.steps.0.steps.0.steps.0.steps.0.steps.0.steps.0.steps.0.steps.0',
  ],
  ['non-object body (array)', [1, 2, 3], 'body'],
  ['non-object body (string)', 'hello', 'body'],
  ['wrong type literal', definition({ type: 'loop', name: 'l', steps: [] }), 'root.type'],
  ['negative timeout', definition(seq(prompt('p', { timeoutMs: -5 }))), 'root.steps.0.timeoutMs'],
  [
    'invalid responseFormat JSON Schema',
    definition(seq(prompt('p', { responseFormat: { type: 'nonsense' } }))),
    'root.steps.0.responseFormat',
  ],
  ['missing root', { name: 'x', agents: {} }, 'root'],
  [
    'temperature out of range',
    definition(prompt('p'), { agents: { a: { model: 'sim/sonnet', temperature: 5 } } }),
    'agents.a.temperature',
  ],
  [
    'unknown tool',
    definition(prompt('p'), { agents: { a: { model: 'sim/sonnet', tools: ['rm_rf'] } } }),
    'agents.a.tools.0',
  ],
  // options.limits over the child workflows a definition names (maxChildren: 0 once ran two of them).
  [
    'maxChildren 0 with a child workflow',
    definition(seq(childWorkflow('kid')), { options: { limits: { maxChildren: 0 } } }),
    'root.steps.0',
  ],
  [
    'maxChildren 1 with two child workflows',
    definition(seq(childWorkflow('kid'), childWorkflow('kid2')), { options: { limits: { maxChildren: 1 } } }),
    'root.steps.1',
  ],
  [
    "a child's own maxChildren",
    definition(
      seq({
        type: 'workflow',
        name: 'kid',
        definition: {
          name: 'kid',
          root: seq(childWorkflow('g1'), childWorkflow('g2')),
          options: { limits: { maxChildren: 1 } },
        },
      }),
    ),
    'root.steps.0.definition.root.steps.1',
  ],
  [
    'maxDescendants 2 with three descendants',
    definition(
      seq(childWorkflow('a1'), {
        type: 'workflow',
        name: 'a2',
        definition: { name: 'a2', root: seq(childWorkflow('a3')) },
      }),
      {
        options: { limits: { maxDescendants: 2 } },
      },
    ),
    'root.steps.1.definition.root.steps.0',
  ],
  [
    'child workflows nested deeper than maxDepth',
    definition(seq({ type: 'workflow', name: 'd1', definition: { name: 'd1', root: seq(childWorkflow('d2')) } }), {
      options: { limits: { maxDepth: 1 } },
    }),
    'root.steps.0.definition.root.steps.0',
  ],
  [
    'unknown field in a simulate script',
    definition(prompt('p'), { agents: { a: { model: 'sim/sonnet', simulate: { latency: 5 } } } }),
    'agents.a.simulate.latency',
  ],
];

describe('POST /v1/workflows rejects malformed definitions with a 4xx naming the field', () => {
  it.each(cases)('%s', async (_label, body, path) => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/workflows',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const error = res.json() as {
      statusCode: number;
      code: string;
      error: string;
      message: string;
      details: Array<{ path: string; message: string }>;
    };
    expect(error).toMatchObject({ statusCode: 400, code: 'VALIDATION_ERROR', error: 'Bad Request' });
    expect(error.details.map((d) => d.path)).toContain(path);
    expect(error.message).toContain(path);
    for (const detail of error.details) expect(detail.message.length).toBeGreaterThan(0);
  });

  it('accepts the quick-start example itself', async () => {
    expect((await submit(t.app, quickStartExample)).statusCode).toBe(202);
  });
});

describe('transport-level errors keep their status and the JSON error shape', () => {
  it('413 PAYLOAD_TOO_LARGE for a body over 1 MiB', async () => {
    const res = await submit(t.app, definition(prompt('p'), { input: { blob: 'x'.repeat(1024 * 1024 + 10) } }));
    expect(res.statusCode).toBe(413);
    expect(res.json()).toMatchObject({ statusCode: 413, code: 'PAYLOAD_TOO_LARGE', error: 'Payload Too Large' });
  });

  it('400 INVALID_JSON for malformed JSON', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/workflows',
      headers: { 'content-type': 'application/json' },
      payload: '{"name": "x",',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ statusCode: 400, code: 'INVALID_JSON', error: 'Bad Request' });
  });

  it('415 for a body that is not JSON', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/workflows',
      headers: { 'content-type': 'application/xml' },
      payload: '<workflow/>',
    });
    expect(res.statusCode).toBe(415);
    expect(res.json()).toMatchObject({ statusCode: 415, code: 'UNSUPPORTED_MEDIA_TYPE' });
  });

  it('404 NOT_FOUND JSON for unknown routes and unknown workflows', async () => {
    const route = await t.app.inject({ method: 'GET', url: '/v1/nothing-here' });
    expect(route.statusCode).toBe(404);
    expect(route.json()).toMatchObject({ statusCode: 404, code: 'NOT_FOUND', error: 'Not Found' });
    for (const suffix of ['', '/tree', '/events']) {
      const res = await t.app.inject({ method: 'GET', url: `/v1/workflows/wf_0000${suffix}` });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ code: 'NOT_FOUND' });
    }
  });

  it('400 for a malformed workflow id', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/workflows/not%20an%20id' });
    expect(res.statusCode).toBe(400);
    expect(res.json().details[0].path).toBe('params.id');
  });
});

describe('5xx answers never leak internals', () => {
  it('answers a generic 500 when the store fails', async () => {
    const broken = await buildTestApp();
    // A real fault: the database is closed under the running app.
    await broken.deps.close();
    const res = await broken.app.inject({ method: 'GET', url: '/v1/workflows' });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({
      statusCode: 500,
      code: 'INTERNAL',
      error: 'Internal Server Error',
      message: 'internal error',
    });
    await broken.app.close();
  });

  it("an invalid responseFormat names the allowed types, not ajv's raw list", async () => {
    const res = await submit(t.app, definition(prompt('p', { responseFormat: { type: 'strin' } })));
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toContain('type must be one of: array, boolean, integer, null, number, object, string');
    expect(res.json().message).not.toContain('allowed values');
  });
});
