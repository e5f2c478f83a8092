import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServerProcess, startServer, stopAllServers, tempDir } from '../support/server-process.js';

/**
 * HTTP edges of the real process: bearer auth, probes, docs (docs/design.md#http-api-conventions,
 * docs/design.md#security). The limits (body,
 * nesting, slow headers, rate, running per tenant) are test/process/limits.test.ts.
 */

const KEY = 'acme-key-0123456789abcdef';
let server: ServerProcess;
const tmp = tempDir('baton-http-');

beforeAll(async () => {
  server = await startServer({
    dbPath: tmp.dbPath(),
    // With API keys the service leaves dev mode; HOST keeps the listener on loopback for the test.
    env: { API_KEYS: `acme:${KEY}`, HOST: '127.0.0.1' },
  });
});
afterAll(async () => {
  await stopAllServers();
  tmp.cleanup();
});

const auth = { authorization: `Bearer ${KEY}` };
const small = {
  name: 'limits',
  agents: { a: { model: 'sim/haiku' } },
  root: { type: 'prompt', name: 'only', agent: 'a', user: 'hello' },
};

describe('HTTP limits and edges (real process)', () => {
  it('listens on the configured loopback address', () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(server.logs.some((l) => l.includes('single-tenant dev mode'))).toBe(false);
  });

  it('answers 401 without a bearer token or with a wrong one, 200 with the right one', async () => {
    const none = await fetch(`${server.url}/v1/workflows`);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    expect(((await none.json()) as { code?: string }).code).toBe('UNAUTHORIZED');

    const wrong = await fetch(`${server.url}/v1/workflows`, {
      headers: { authorization: 'Bearer not-the-key-0123456789' },
    });
    expect(wrong.status).toBe(401);
    const notBearer = await fetch(`${server.url}/v1/workflows`, { headers: { authorization: `Basic ${KEY}` } });
    expect(notBearer.status).toBe(401);
    const post = await fetch(`${server.url}/v1/workflows`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(small),
    });
    expect(post.status).toBe(401);

    const right = await fetch(`${server.url}/v1/workflows`, { headers: auth });
    expect(right.status).toBe(200);
    expect(Array.isArray(((await right.json()) as { items?: unknown }).items)).toBe(true);
  });

  it('serves /healthz and /readyz without credentials', async () => {
    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({
      status: 'ok',
      instance: expect.stringMatching(/^in_[0-9a-f]{32}$/),
      database: 'sqlite',
    });
    const ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).toBe(200);
    const body = (await ready.json()) as { status: string; running: number; queued: number };
    expect(body.status).toBe('ready');
    expect(Number.isInteger(body.running)).toBe(true);
    expect(Number.isInteger(body.queued)).toBe(true);
  });

  it('serves Swagger UI at /docs and the OpenAPI document at /openapi.json', async () => {
    const docs = await fetch(`${server.url}/docs`);
    expect(docs.status).toBe(200);
    expect(docs.headers.get('content-type')).toMatch(/^text\/html/);
    expect((await docs.text()).toLowerCase()).toContain('swagger-ui');

    const spec = await fetch(`${server.url}/openapi.json`);
    expect(spec.status).toBe(200);
    const doc = (await spec.json()) as { openapi?: string; paths?: Record<string, unknown> };
    expect(doc.openapi).toMatch(/^3\./);
    expect(Object.keys(doc.paths ?? {})).toEqual(
      expect.arrayContaining([
        '/v1/workflows',
        '/v1/workflows/{id}',
        '/v1/workflows/{id}/events',
        '/healthz',
        '/readyz',
      ]),
    );
    expect(doc.paths?.['/v1/workflows']).toHaveProperty('post');
  });
});
