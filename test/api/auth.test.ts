import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { definition, prompt, submit } from '../support/api-fixtures.js';
import { buildTestApp, type TestApp, waitForStatus } from '../support/build-app.js';

const KEY_A = 'key-of-tenant-a-0123456789';
const KEY_B = 'key-of-tenant-b-9876543210';
const asA = { authorization: `Bearer ${KEY_A}` };
const asB = { authorization: `Bearer ${KEY_B}` };

let t: TestApp;
let workflowId: string;
beforeAll(async () => {
  t = await buildTestApp({ API_KEYS: `a:${KEY_A},b:${KEY_B}` });
  const res = await submit(t.app, definition(prompt('mine')), asA);
  expect(res.statusCode).toBe(202);
  workflowId = res.json().id;
  await waitForStatus(t.app, workflowId, ['completed'], 5_000, asA);
});
afterAll(async () => {
  await t.close();
});

describe('API keys', () => {
  it('401 without a key, with www-authenticate: Bearer', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/workflows' });
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer');
    expect(res.json()).toMatchObject({ statusCode: 401, code: 'UNAUTHORIZED', error: 'Unauthorized' });
  });

  it('401 with a wrong key, a non-bearer scheme, and on unknown /v1 routes', async () => {
    for (const authorization of ['Bearer not-a-configured-key', `Basic ${KEY_A}`, 'Bearer', `Bearer ${KEY_A}x`]) {
      const res = await t.app.inject({ method: 'GET', url: '/v1/workflows', headers: { authorization } });
      expect(res.statusCode).toBe(401);
      expect(res.json().code).toBe('UNAUTHORIZED');
    }
    expect((await t.app.inject({ method: 'GET', url: '/v1/secret-route' })).statusCode).toBe(401);
  });

  it('401 over a real socket too (supertest), and the probes and docs stay public', async () => {
    await t.app.ready();
    await request(t.app.server)
      .post('/v1/workflows')
      .send(definition(prompt('x')))
      .expect(401)
      .expect('www-authenticate', 'Bearer');
    const health = await request(t.app.server).get('/healthz').expect(200);
    expect(health.body).toEqual({ status: 'ok', instance: t.deps.instance.id, database: 'sqlite' });
    expect(t.deps.instance.id).toMatch(/^in_[0-9a-f]{32}$/);
    await request(t.app.server).get('/openapi.json').expect(200);
    const docs = await request(t.app.server).get('/docs/');
    expect(docs.status).toBe(200);
    expect(docs.headers['content-type']).toMatch(/text\/html/);
  });
});

describe('GET /', () => {
  it('redirects (302) to /dashboard without credentials, and is not in the OpenAPI document', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/' });
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe('/dashboard');
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(Object.keys(doc.paths)).not.toContain('/');
  });
});

describe('tenant isolation', () => {
  it('lets the owner read everything', async () => {
    for (const suffix of ['', '/tree', '/tree?format=text', '/events']) {
      const res = await t.app.inject({ method: 'GET', url: `/v1/workflows/${workflowId}${suffix}`, headers: asA });
      expect(res.statusCode).toBe(200);
    }
  });

  it('answers 404 to another tenant on the workflow, its tree, events (JSON and SSE) and cancel', async () => {
    const urls = ['', '/tree', '/tree?format=text', '/events'].map((s) => `/v1/workflows/${workflowId}${s}`);
    for (const url of urls) {
      const res = await t.app.inject({ method: 'GET', url, headers: asB });
      expect(res.statusCode, url).toBe(404);
      expect(res.json()).toMatchObject({ code: 'NOT_FOUND' });
    }
    const sse = await t.app.inject({
      method: 'GET',
      url: `/v1/workflows/${workflowId}/events`,
      headers: { ...asB, accept: 'text/event-stream' },
    });
    expect(sse.statusCode).toBe(404);
    const cancel = await t.app.inject({ method: 'POST', url: `/v1/workflows/${workflowId}/cancel`, headers: asB });
    expect(cancel.statusCode).toBe(404);
    const after = await t.app.inject({ method: 'GET', url: `/v1/workflows/${workflowId}`, headers: asA });
    expect(after.json()).toMatchObject({ status: 'completed', cancelRequested: false });
  });

  it("never lists another tenant's workflows", async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/workflows?limit=100', headers: asB });
    expect(res.statusCode).toBe(200);
    expect(res.json().items).toEqual([]);
    const own = await t.app.inject({ method: 'GET', url: '/v1/workflows?limit=100', headers: asA });
    expect(own.json().items.map((w: { id: string }) => w.id)).toContain(workflowId);
  });

  it('scopes Idempotency-Key per tenant', async () => {
    const body = definition(prompt('same'));
    const a = await submit(t.app, body, { ...asA, 'idempotency-key': 'shared-key' });
    const b = await submit(t.app, body, { ...asB, 'idempotency-key': 'shared-key' });
    expect(a.statusCode).toBe(202);
    expect(b.statusCode).toBe(202);
    expect(b.json().id).not.toBe(a.json().id);
  });
});

describe('dev mode', () => {
  it('runs every request as the default tenant without a key', async () => {
    const dev = await buildTestApp();
    try {
      const res = await submit(dev.app, definition(prompt('dev')));
      expect(res.statusCode).toBe(202);
      const got = await dev.app.inject({ method: 'GET', url: `/v1/workflows/${res.json().id}` });
      expect(got.statusCode).toBe(200);
    } finally {
      await dev.close();
    }
  });
});
