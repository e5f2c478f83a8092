import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/domain/errors.js';
import { createLogger } from '../../src/logging/logger.js';
import { definition, prompt, submit } from '../support/api-fixtures.js';
import { buildTestApp, type TestApp, waitForStatus } from '../support/build-app.js';

/**
 * What the route fuzz found, each pinned by a plain example: fastify's router answered some
 * requests itself, before the app's error handling, hooks and request log (a bad percent escape,
 * a path parameter over its default 100 characters), and that 100 was below what the routes'
 * own schemas allow (a cache key is up to 400 characters; an agent name of 36 makes one of 101).
 */
let t: TestApp;
const lines: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  const logger = createLogger({
    level: 'info',
    destination: {
      write(line: string) {
        lines.push(JSON.parse(line) as Record<string, unknown>);
      },
    },
  });
  t = await buildTestApp({ LOG_LEVEL: 'info', RATE_LIMIT_PER_MINUTE: '0' }, { logger });
});
afterAll(() => t.close());

const requestLines = (url: string) => lines.filter((l) => l.msg === 'request' && l.url === url);

describe('routing errors go through the one error mapping', () => {
  it('a malformed percent escape is a 400 BAD_REQUEST of the table, logged once, the URL not echoed', async () => {
    const url = '/v1/workflows/%zz-secret-looking-path';
    const res = await t.app.inject({ method: 'GET', url });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const body = res.json() as { code: string; statusCode: number; message: string };
    expect(body).toMatchObject({ statusCode: 400, code: 'BAD_REQUEST', error: 'Bad Request' });
    expect(Object.hasOwn(ERROR_CODES, body.code)).toBe(true);
    expect(body.message).not.toContain('secret-looking');
    expect(requestLines(url)).toHaveLength(1);
    const metrics = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.body).toMatch(/baton_http_requests_total\{[^}]*route="unmatched"[^}]*status="400"[^}]*\} 1/);
  });

  it('a path parameter longer than any route takes is a 400 VALIDATION_ERROR naming params, logged once', async () => {
    const url = `/v1/workflows/${'a'.repeat(5000)}`;
    const res = await t.app.inject({ method: 'GET', url });
    expect(res.statusCode).toBe(400);
    const body = res.json() as { code: string; message: string; details?: Array<{ path: string }> };
    expect(body.code).toBe('VALIDATION_ERROR');
    expect(body.details?.[0]?.path).toBe('params');
    expect(body.message.length).toBeLessThan(200);
    expect(requestLines(url)).toHaveLength(1);
  });
});

describe('path parameters as long as their schemas allow reach their routes', () => {
  it('a workflow id of 100 characters (its limit) is looked up: 404 NOT_FOUND, not refused', async () => {
    const res = await t.app.inject({ method: 'GET', url: `/v1/workflows/wf_${'0'.repeat(97)}` });
    expect(res.statusCode, res.body).toBe(404);
    expect(res.json().code).toBe('NOT_FOUND');
  });

  it('the cache entry of an agent with a 100-character name is readable and deletable by its key', async () => {
    const agent = `a${'n'.repeat(99)}`;
    const res = await submit(
      t.app,
      definition(prompt('p', { agent }), { agents: { [agent]: { model: 'sim/sonnet' } } }),
    );
    expect(res.statusCode, res.body).toBe(202);
    const view = await waitForStatus(t.app, res.json().id);
    expect(view.status).toBe('completed');
    const [key] = (view.tree as { cacheKeys: string[] }).cacheKeys;
    expect(key?.length).toBe(165);
    const path = `/v1/cache/${encodeURIComponent(key as string)}`;
    const entry = await t.app.inject({ method: 'GET', url: path });
    expect(entry.statusCode, entry.body).toBe(200);
    expect(entry.json().key).toBe(key);
    expect((await t.app.inject({ method: 'DELETE', url: path })).statusCode).toBe(204);
    expect((await t.app.inject({ method: 'GET', url: path })).statusCode).toBe(404);
  });
});
