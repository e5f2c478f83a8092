import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { definition, type Json, prompt, submit } from '../support/api-fixtures.js';
import { buildTestApp, type TestApp } from '../support/build-app.js';

/** What a new user reads when a request is wrong: plain words, the place, and a hint when one fits. */

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => {
  await t.close();
});

interface ErrorJson {
  statusCode: number;
  code: string;
  message: string;
  details?: Array<{ path: string; message: string }>;
}

const seq = (...steps: Json[]): Json => ({ type: 'sequence', name: 'main', steps });

async function rejected(body: unknown): Promise<ErrorJson> {
  const res = await submit(t.app, body);
  expect(res.statusCode, res.body).toBe(400);
  return res.json() as ErrorJson;
}

/** The message of the detail at `path`. */
async function detailAt(body: unknown, path: string): Promise<string | undefined> {
  const error = await rejected(body);
  return error.details?.find((d) => d.path === path)?.message;
}

function postRaw(payload: string, contentType = 'application/json') {
  return t.app.inject({ method: 'POST', url: '/v1/workflows', headers: { 'content-type': contentType }, payload });
}

describe('transport errors say what to do', () => {
  it('415 says to send content-type: application/json', async () => {
    const res = await postRaw('<workflow/>', 'application/xml');
    expect(res.statusCode).toBe(415);
    expect(res.json()).toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE' });
    expect(res.json().message).toContain('content-type: application/json');
  });

  it('a JSON syntax error names the line and column of the offending character', async () => {
    const res = await postRaw('{\n  "name": "x",\n  "agents": {},\n    }');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'INVALID_JSON' });
    expect(res.json().message).toMatch(/^body is not valid JSON: unexpected "}" at line 4, column 5/);
  });

  it('a truncated JSON body says where it ends', async () => {
    const res = await postRaw('{"name": "x",');
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toMatch(/^body is not valid JSON: unexpected end of input at line 1, column 14/);
  });
  it('an empty JSON body and a __proto__ key say what is wrong', async () => {
    const empty = await postRaw('');
    expect(empty.statusCode).toBe(400);
    expect(empty.json().message).toMatch(/^body is empty/);
    const poisoned = await postRaw('{"__proto__": {"admin": true}}');
    expect(poisoned.statusCode).toBe(400);
    expect(poisoned.json()).toMatchObject({ code: 'INVALID_JSON', message: expect.stringContaining('__proto__') });
  });
});

describe('validation messages are plain words', () => {
  it('a missing field "is required"', async () => {
    expect(await detailAt(definition(seq({ type: 'prompt', name: 'p', user: 'u' })), 'root.steps.0.agent')).toBe(
      'is required',
    );
    expect(await detailAt({ name: 'x', agents: {} }, 'root')).toBe('is required');
  });

  it('agents that are not an object "must be an object keyed by agent name"', async () => {
    expect(await detailAt(definition(prompt('p'), { agents: [] }), 'agents')).toBe(
      'must be an object keyed by agent name',
    );
  });

  it('a node that is not an object "must be an object"', async () => {
    expect(await detailAt({ ...definition(prompt('p')), root: 'prompt' }, 'root')).toBe('must be an object');
  });

  it('a bad node type lists the node types', async () => {
    expect(await detailAt(definition({ type: 'loop', name: 'l', steps: [] }), 'root.type')).toBe(
      'must be one of prompt, sequence, parallel, review, workflow',
    );
  });

  it('enum errors list the allowed values', async () => {
    const body = definition(prompt('p'), { task: { type: 'review', complexity: 'huge' } });
    expect(await detailAt(body, 'task.complexity')).toBe('must be one of trivial, simple, moderate, complex, critical');
  });

  it('limits are said in words', async () => {
    expect(await detailAt(definition(seq()), 'root.steps')).toBe('must have at least 1 item');
    expect(await detailAt(definition(prompt('p'), { name: 'n'.repeat(101) }), 'name')).toBe(
      'must be at most 100 characters',
    );
    expect(await detailAt(definition(prompt('p', { user: '' })), 'root.user')).toBe('must be at least 1 character');
    expect(await detailAt(definition(prompt('p', { maxTurns: 99 })), 'root.maxTurns')).toBe('must be at most 50');
    expect(await detailAt(definition(prompt('p', { maxTurns: 1.5 })), 'root.maxTurns')).toBe('must be an integer');
    expect(await detailAt(definition(prompt('p', { timeoutMs: 'soon' })), 'root.timeoutMs')).toBe('must be a number');
  });

  it('the summary message is "<path>: <plain words>"', async () => {
    const error = await rejected(definition(seq()));
    expect(error.message).toBe('root.steps: must have at least 1 item');
  });

  it('query parameters get the same words', async () => {
    const limit = await t.app.inject({ method: 'GET', url: '/v1/workflows?limit=0' });
    expect(limit.json().message).toBe('querystring.limit: must be at least 1');
    const format = await t.app.inject({ method: 'GET', url: '/v1/workflows/wf_x/tree?format=yaml' });
    expect(format.json().details).toEqual([{ path: 'querystring.format', message: 'must be one of json, text' }]);
  });

  it('no zod jargon reaches a message', async () => {
    const body = {
      name: 'n'.repeat(101),
      agents: 'none',
      root: { type: 'sequence', name: 'main', steps: [{ type: 'prompt', name: 'p', maxTurns: 0 }], children: [] },
      task: { type: 'review', complexity: 'huge', signals: ['everything'] },
    };
    const error = await rejected(body);
    expect(error.details?.length).toBeGreaterThan(4);
    for (const text of [error.message, ...(error.details ?? []).map((d) => d.message)]) {
      expect(text).not.toMatch(/Invalid input|expected \w+, received|Too (small|big)|Unrecognized|>=|<=/);
    }
  });
});

describe('an unknown field gets a "did you mean" when one is close', () => {
  it('children → steps (synonym)', async () => {
    const body = definition({ type: 'sequence', name: 'main', children: [prompt('p')] });
    expect(await detailAt(body, 'root.children')).toBe('unknown field "children"; did you mean "steps"?');
  });

  it('timeout → timeoutMs (prefix), inside a nested prompt', async () => {
    const body = definition(seq(prompt('p', { timeout: 5000 })));
    expect(await detailAt(body, 'root.steps.0.timeout')).toBe('unknown field "timeout"; did you mean "timeoutMs"?');
  });

  it('temprature → temperature (a typo), in an agent', async () => {
    const body = definition(prompt('p'), { agents: { a: { model: 'sim/sonnet', temprature: 0.2 } } });
    expect(await detailAt(body, 'agents.a.temprature')).toBe('unknown field "temprature"; did you mean "temperature"?');
  });

  it('inside a child workflow definition, through the discriminated node types', async () => {
    const child = { type: 'workflow', name: 'sub', definition: { name: 'c', root: prompt('p'), option: {} } };
    expect(await detailAt(definition(seq(child)), 'root.steps.0.definition.option')).toBe(
      'unknown field "option"; did you mean "options"?',
    );
  });

  it('no suggestion when nothing is close', async () => {
    const body = { ...definition(prompt('p')), colour: 'red' };
    expect(await detailAt(body, 'colour')).toBe('unknown field "colour"');
  });
});

describe('error details have one shape everywhere: [{ path, message }]', () => {
  it('a reused Idempotency-Key', async () => {
    const headers = { 'idempotency-key': 'details-shape' };
    expect((await submit(t.app, definition(prompt('one')), headers)).statusCode).toBe(202);
    const reused = await submit(t.app, definition(prompt('two')), headers);
    expect(reused.statusCode).toBe(422);
    const body = reused.json() as ErrorJson;
    expect(body.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(body.details).toEqual([{ path: 'headers.idempotency-key', message: expect.stringMatching(/^was used/) }]);
  });

  it('a malformed cursor', async () => {
    for (const url of ['/v1/workflows?cursor=not-a-cursor', '/v1/traces?cursor=not-a-cursor']) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(400);
      expect(res.json().details, url).toEqual([{ path: 'querystring.cursor', message: expect.any(String) }]);
    }
  });
});
