import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { definition, type Json, prompt, submit } from '../support/api-fixtures.js';
import { buildTestApp, type TestApp, waitForStatus } from '../support/build-app.js';
import { HOSTILE_DEFINITIONS, REDOS_DEFINITION } from '../support/hostile-payloads.js';

/**
 * The payloads that stopped the service for every tenant (a heap bomb through the simulated model,
 * a blocking schema compile, deep nesting answered with a 500): each is refused at submission with
 * a 400 that names the offending keyword or path, and never with internal error text.
 */
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => {
  await t.close();
});

describe('hostile definitions are refused at submission', () => {
  for (const payload of HOSTILE_DEFINITIONS) {
    it(`${payload.name} → 400 naming ${payload.names}`, async () => {
      const res = await t.app.inject({
        method: 'POST',
        url: '/v1/workflows',
        headers: { 'content-type': 'application/json' },
        payload: payload.body,
      });
      expect(res.statusCode, res.body).toBe(400);
      const body = res.json() as { code: string; message: string; details?: Array<{ path: string }> };
      expect(body.code).toBe('VALIDATION_ERROR');
      expect(body.message).toContain(payload.names);
      expect(res.body).not.toMatch(/Maximum call stack|RangeError|TypeError|at \w+ \(/);
    });
  }
});

describe('a user pattern runs on a linear-time engine', () => {
  it('a 28-character answer against ^(a+)+$ is checked at once (VALIDATION_FAILED), not backtracked', async () => {
    const res = await submit(t.app, REDOS_DEFINITION);
    expect(res.statusCode, res.body).toBe(202);
    const view = await waitForStatus(t.app, (res.json() as { id: string }).id);
    expect(view.status).toBe('failed');
    expect((view.error as { code: string }).code).toBe('VALIDATION_FAILED');
  });

  it('a pattern the linear-time engine cannot run (a backreference) is a 400 naming the keyword', async () => {
    const body = definition(prompt('p', { responseFormat: { type: 'string', pattern: '^(a)\\1$' } }));
    const res = await submit(t.app, body);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().message).toContain('root.responseFormat.pattern');
  });

  it('patternProperties are checked by the same engine', async () => {
    const schema = { type: 'object', patternProperties: { '^(?=x)': { type: 'string' } } };
    const res = await submit(t.app, definition(prompt('p', { responseFormat: schema })));
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().message).toContain('root.responseFormat.patternProperties');
  });

  it('ordinary patterns (classes, \\d, \\u escapes, anchors) still validate answers', async () => {
    const schema: Json = {
      type: 'object',
      required: ['id', 'word'],
      properties: {
        id: { type: 'string', pattern: '^[A-Z]{2}-\\d{3}$' },
        word: { type: 'string', pattern: '^\\u0063at$' },
      },
    };
    const body = definition(prompt('p', { responseFormat: schema }), {
      agents: { a: { model: 'sim/sonnet', simulate: { responses: [{ json: { id: 'AB-123', word: 'cat' } }] } } },
    });
    const res = await submit(t.app, body);
    expect(res.statusCode, res.body).toBe(202);
    const view = await waitForStatus(t.app, (res.json() as { id: string }).id);
    expect(view.status, JSON.stringify(view.error)).toBe('completed');
  });
});

describe('accepted schemas stay within the budget', () => {
  it('a schema at the limits (127 subschemas, 32 patterns) is accepted and its simulated instance is generated', async () => {
    const properties: Json = {};
    for (let i = 0; i < 126; i++) {
      properties[`p${i}`] = i < 32 ? { type: 'string', minLength: 10, pattern: `^x{${i % 9}}` } : { type: 'integer' };
    }
    const schema = { type: 'object', properties, required: Object.keys(properties) };
    const res = await submit(t.app, definition(prompt('p', { responseFormat: schema })));
    expect(res.statusCode, res.body).toBe(202);
    const view = await waitForStatus(t.app, (res.json() as { id: string }).id);
    expect(view.status, JSON.stringify(view.error)).toBe('completed');
  });
});
