import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { definition, prompt, submit } from '../support/api-fixtures.js';
import { buildTestApp, type TestApp } from '../support/build-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ SHUTDOWN_GRACE_MS: '5000' });
});
afterAll(async () => {
  await t.close();
});

describe('probes', () => {
  it('GET /healthz is 200 ok', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok', instance: t.deps.instance.id, database: 'sqlite' });
  });

  it('GET /readyz reports running and queued work', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ready', running: expect.any(Number), queued: expect.any(Number) });
  });
});

describe('while shutting down', () => {
  it('answers 503 SHUTTING_DOWN with retry-after everywhere except /healthz', async () => {
    t.deps.lifecycle.shuttingDown = true;
    try {
      for (const [method, url] of [
        ['GET', '/readyz'],
        ['GET', '/v1/workflows'],
        ['GET', '/openapi.json'],
        ['POST', '/v1/workflows'],
      ] as const) {
        const res =
          method === 'POST' ? await submit(t.app, definition(prompt('late'))) : await t.app.inject({ method, url });
        expect(res.statusCode, url).toBe(503);
        expect(res.headers['retry-after']).toBe('5');
        expect(res.json()).toMatchObject({ statusCode: 503, code: 'SHUTTING_DOWN', error: 'Service Unavailable' });
      }
      expect((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    } finally {
      t.deps.lifecycle.shuttingDown = false;
    }
  });

  it('maps the executor refusing new work to 503, not 500', async () => {
    const draining = await buildTestApp();
    try {
      await draining.deps.executor.shutdown(0);
      const res = await submit(draining.app, definition(prompt('refused')));
      expect(res.statusCode).toBe(503);
      expect(res.json()).toMatchObject({ statusCode: 503, code: 'SHUTTING_DOWN' });
      expect(res.headers['retry-after']).toBeDefined();
    } finally {
      await draining.close();
    }
  });
});
