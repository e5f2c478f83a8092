import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { definition, prompt, submit } from '../helpers/api-fixtures.js';
import { buildTestApp, type TestApp } from '../helpers/build-app.js';

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
