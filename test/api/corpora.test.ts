import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCUMENTS_BODY_LIMIT_BYTES } from '../../src/api/corpora.routes.js';
import { MAX_CORPORA_PER_TENANT, MAX_DOCUMENT_CHARS, MAX_QUERY_CHARS } from '../../src/domain/corpus.js';
import { buildTestApp, type TestApp } from '../support/build-app.js';

/**
 * The corpora API over the real app and SQLite (docs/design.md#agent-tools, docs/design.md#http-api-conventions):
 * flows, tenant isolation, limits.
 */
const KEY_A = 'key-of-tenant-a-0123456789';
const KEY_B = 'key-of-tenant-b-9876543210';
const KEY_C = 'key-of-tenant-c-5555555555';
const asA = { authorization: `Bearer ${KEY_A}` };
const asB = { authorization: `Bearer ${KEY_B}` };
const asC = { authorization: `Bearer ${KEY_C}` };

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ API_KEYS: `a:${KEY_A},b:${KEY_B},c:${KEY_C}` });
});
afterAll(async () => {
  await t.close();
});

type Headers = Record<string, string>;
const post = (url: string, payload: unknown, headers: Headers = asA) =>
  t.app.inject({ method: 'POST', url, payload: payload as Record<string, unknown>, headers });
const get = (url: string, headers: Headers = asA) => t.app.inject({ method: 'GET', url, headers });
const del = (url: string, headers: Headers = asA) => t.app.inject({ method: 'DELETE', url, headers });

async function corpus(name: string, headers: Headers = asA): Promise<{ id: string; name: string }> {
  const res = await post('/v1/corpora', { name }, headers);
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

const HANDBOOK = [
  {
    title: 'Deploys',
    text: 'Deploys run from the main branch after CI is green. Roll back with the previous release tag.',
  },
  { title: 'On-call', text: 'The on-call engineer acknowledges pages within 15 minutes and writes the incident log.' },
  { title: 'Lunch', text: 'The cafeteria serves soup on Mondays.' },
];

describe('corpora: create, fill, search, list, delete', () => {
  it('runs the whole flow with the shapes the OpenAPI document declares', async () => {
    const created = await post('/v1/corpora', { name: 'handbook', description: 'The engineering handbook' });
    expect(created.statusCode).toBe(201);
    const c = created.json();
    expect(created.headers.location).toBe(`/v1/corpora/${c.id}`);
    expect(c).toEqual({
      id: expect.stringMatching(/^cp_[0-9a-f]{32}$/),
      name: 'handbook',
      description: 'The engineering handbook',
      documentCount: 0,
      chunkCount: 0,
      bytes: 0,
      createdAt: expect.any(String),
    });

    const added = await post(`/v1/corpora/${c.id}/documents`, { documents: HANDBOOK });
    expect(added.statusCode, added.body).toBe(201);
    expect(added.json()).toMatchObject({ chunks: 3, corpus: { documentCount: 3, chunkCount: 3 } });
    expect(added.json().documentIds).toHaveLength(3);

    const search = await get('/v1/corpora/handbook/search?q=how+do+I+roll+back+a+deploy&k=2');
    expect(search.statusCode).toBe(200);
    const body = search.json();
    expect(body).toMatchObject({ query: 'how do I roll back a deploy', count: body.hits.length });
    expect(body.hits[0]).toMatchObject({ title: 'Deploys', position: 0, documentId: added.json().documentIds[0] });
    expect(body.hits.length).toBeLessThanOrEqual(2);

    expect((await get(`/v1/corpora/${c.id}`)).json()).toMatchObject({ name: 'handbook', documentCount: 3 });
    expect((await get('/v1/corpora')).json().items.map((x: { id: string }) => x.id)).toContain(c.id);

    expect((await del('/v1/corpora/handbook')).statusCode).toBe(204);
    expect((await get(`/v1/corpora/${c.id}`)).statusCode).toBe(404);
    expect((await get(`/v1/corpora/${c.id}/search?q=deploy`)).statusCode).toBe(404);
    expect((await del(`/v1/corpora/${c.id}`)).statusCode).toBe(404);

    // The same name again: a new corpus, none of the old chunks.
    const again = await corpus('handbook');
    expect(again.id).not.toBe(c.id);
    expect((await get(`/v1/corpora/${again.id}/search?q=deploy+roll+back`)).json()).toMatchObject({ count: 0 });
  });

  it('pages the list with a cursor and refuses a forged one', async () => {
    for (let i = 0; i < 3; i++) await corpus(`page-${i}`, asC);
    const first = (await get('/v1/corpora?limit=2', asC)).json();
    expect(first.items).toHaveLength(2);
    const second = (await get(`/v1/corpora?limit=2&cursor=${first.nextCursor}`, asC)).json();
    expect(second.items).toHaveLength(1);
    expect(second.nextCursor).toBeNull();
    const forged = await get('/v1/corpora?cursor=bm90LWEtY3Vyc29y', asC);
    expect(forged.statusCode).toBe(400);
    expect(forged.json().details[0].path).toBe('querystring.cursor');
  });

  it('refuses a taken name with 409 CONFLICT', async () => {
    await corpus('dup');
    const res = await post('/v1/corpora', { name: 'dup' });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ code: 'CONFLICT', details: [{ path: 'name' }] });
  });
});

describe('corpora: tenant isolation', () => {
  let a: { id: string };
  beforeAll(async () => {
    a = await corpus('secret-a');
    await post(`/v1/corpora/${a.id}/documents`, { documents: [{ text: 'the launch code is pelican' }] });
    const b = await corpus('secret-b', asB);
    await post(`/v1/corpora/${b.id}/documents`, { documents: [{ text: 'pelican sightings by the lake' }] }, asB);
  });

  it("answers 404 to every route on another tenant's corpus, by id and by name", async () => {
    for (const ref of [a.id, 'secret-a']) {
      expect((await get(`/v1/corpora/${ref}`, asB)).statusCode).toBe(404);
      expect((await get(`/v1/corpora/${ref}/search?q=pelican`, asB)).statusCode).toBe(404);
      expect((await post(`/v1/corpora/${ref}/documents`, { documents: [{ text: 'x' }] }, asB)).statusCode).toBe(404);
      expect((await del(`/v1/corpora/${ref}`, asB)).statusCode).toBe(404);
    }
    const listed = (await get('/v1/corpora', asB)).json().items.map((c: { name: string }) => c.name);
    expect(listed).not.toContain('secret-a');
    // Still there, untouched.
    expect((await get(`/v1/corpora/${a.id}`)).json()).toMatchObject({ documentCount: 1 });
  });

  it("never returns another tenant's chunks", async () => {
    const mine = (await get('/v1/corpora/secret-b/search?q=pelican+launch+code&k=50', asB)).json();
    expect(mine.hits.map((h: { text: string }) => h.text)).toEqual(['pelican sightings by the lake']);
  });
});

describe('corpora: hostile queries never fail the server', () => {
  let id: string;
  beforeAll(async () => {
    id = (await corpus('hostile')).id;
    await post(`/v1/corpora/${id}/documents`, { documents: HANDBOOK });
  });

  const queries = [
    '"',
    '"""',
    '*',
    'deploy*',
    'NEAR(',
    'NEAR(deploy branch, 2)',
    'col:x',
    'text:deploy',
    'corpus:c1',
    '{corpus text}: deploy',
    'AND OR NOT',
    'deploy AND',
    '^deploy',
    '(((',
    '-deploy +branch',
    'deploy\u0000branch',
    'déploiement 東京 🚀 ﷽',
    '\u0301\u0301',
    "'; DROP TABLE corpora; --",
    'x'.repeat(MAX_QUERY_CHARS),
    Array.from({ length: 300 }, (_, i) => `w${i}`)
      .join(' ')
      .slice(0, MAX_QUERY_CHARS),
  ];

  it.each(queries.map((q) => [q.slice(0, 40), q]))('%s', async (_label, q) => {
    const res = await get(`/v1/corpora/${id}/search?q=${encodeURIComponent(q)}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ query: q });
  });

  it('finds the literal words of a query that is all syntax around them', async () => {
    const res = (await get(`/v1/corpora/${id}/search?q=${encodeURIComponent('NEAR("deploys" AND *branch*)')}`)).json();
    expect(res.hits[0]).toMatchObject({ title: 'Deploys' });
  });
});

describe('corpora: limits answer 4xx JSON naming the limit', () => {
  let id: string;
  beforeAll(async () => {
    id = (await corpus('limits')).id;
  });

  const expectError = (res: { statusCode: number; json(): any }, status: number, code: string, text: string) => {
    expect(res.statusCode).toBe(status);
    const body = res.json();
    expect(body).toMatchObject({ statusCode: status, code });
    expect(JSON.stringify(body)).toContain(text);
  };

  it('k in 1..50, q of 1..1000 characters', async () => {
    expectError(await get(`/v1/corpora/${id}/search?q=x&k=51`), 400, 'VALIDATION_ERROR', 'at most 50');
    expectError(await get(`/v1/corpora/${id}/search?q=x&k=0`), 400, 'VALIDATION_ERROR', 'querystring.k');
    expectError(await get(`/v1/corpora/${id}/search?q=`), 400, 'VALIDATION_ERROR', 'querystring.q');
    expectError(await get(`/v1/corpora/${id}/search`), 400, 'VALIDATION_ERROR', 'querystring.q');
    const long = `/v1/corpora/${id}/search?q=${'x'.repeat(MAX_QUERY_CHARS + 1)}`;
    expectError(await get(long), 400, 'VALIDATION_ERROR', `at most ${MAX_QUERY_CHARS} characters`);
  });

  it('documents per request, characters per document, blank text, unknown fields', async () => {
    const many = { documents: Array.from({ length: 501 }, () => ({ text: 'x' })) };
    expectError(await post(`/v1/corpora/${id}/documents`, many), 400, 'VALIDATION_ERROR', 'at most 500 items');
    const big = { documents: [{ text: 'x'.repeat(MAX_DOCUMENT_CHARS + 1) }] };
    expectError(
      await post(`/v1/corpora/${id}/documents`, big),
      400,
      'VALIDATION_ERROR',
      `at most ${MAX_DOCUMENT_CHARS} characters`,
    );
    const blank = { documents: [{ text: ' \n ' }] };
    expectError(await post(`/v1/corpora/${id}/documents`, blank), 400, 'VALIDATION_ERROR', 'documents.0.text');
    expectError(await post(`/v1/corpora/${id}/documents`, { documents: [] }), 400, 'VALIDATION_ERROR', 'at least 1');
    const extra = { documents: [{ text: 'x', body: 'y' }] };
    expectError(await post(`/v1/corpora/${id}/documents`, extra), 400, 'VALIDATION_ERROR', 'documents.0.body');
    // Nothing of those requests was written.
    expect((await get(`/v1/corpora/${id}`)).json()).toMatchObject({ documentCount: 0 });
  });

  it('accepts documents above the 1 MiB default body limit, up to the documents route limit (then 413)', async () => {
    const text = 'lorem ipsum dolor sit amet '.repeat(7_000); // ~189 000 characters
    const fits = { documents: Array.from({ length: 20 }, () => ({ text })) }; // ~3.8 MB
    const res = await post(`/v1/corpora/${id}/documents`, fits);
    expect(res.statusCode, res.body.slice(0, 300)).toBe(201);
    const tooBig = { documents: Array.from({ length: 45 }, () => ({ text })) }; // ~8.5 MB
    expect(JSON.stringify(tooBig).length).toBeGreaterThan(DOCUMENTS_BODY_LIMIT_BYTES);
    expectError(
      await post(`/v1/corpora/${id}/documents`, tooBig),
      413,
      'PAYLOAD_TOO_LARGE',
      String(DOCUMENTS_BODY_LIMIT_BYTES),
    );
  });

  it('names, descriptions, path ids', async () => {
    expectError(await post('/v1/corpora', { name: 'cp_fake' }), 400, 'VALIDATION_ERROR', 'not start with cp_');
    expectError(await post('/v1/corpora', { name: 'has space' }), 400, 'VALIDATION_ERROR', 'name');
    expectError(await post('/v1/corpora', {}), 400, 'VALIDATION_ERROR', 'is required');
    expectError(await get('/v1/corpora/bad%20id'), 400, 'VALIDATION_ERROR', 'params.id');
  });

  it(`MAX_CORPORA_PER_TENANT (${MAX_CORPORA_PER_TENANT}) corpora, then 409 LIMIT_EXCEEDED`, async () => {
    const headers = { authorization: `Bearer ${KEY_C}` };
    const existing = (await get('/v1/corpora?limit=100', headers)).json().items.length;
    for (let i = existing; i < MAX_CORPORA_PER_TENANT; i++) await corpus(`many-${i}`, headers);
    expectError(
      await post('/v1/corpora', { name: 'one-too-many' }, headers),
      409,
      'LIMIT_EXCEEDED',
      'MAX_CORPORA_PER_TENANT',
    );
    // Deleting one makes room again.
    expect((await del(`/v1/corpora/many-${MAX_CORPORA_PER_TENANT - 1}`, headers)).statusCode).toBe(204);
    expect((await post('/v1/corpora', { name: 'one-too-many' }, headers)).statusCode).toBe(201);
  });
});

describe('corpora: bulk', () => {
  it('adds 300 documents in one request and finds each', async () => {
    const { id } = await corpus('bulk');
    const documents = Array.from({ length: 300 }, (_, i) => ({
      title: `Runbook ${i}`,
      text: `Runbook ${i} covers service${i}. ${'Restart the service, check the logs, page the owner. '.repeat(20)}`,
    }));
    const res = await post(`/v1/corpora/${id}/documents`, { documents });
    expect(res.statusCode).toBe(201);
    expect(res.json().corpus).toMatchObject({ documentCount: 300 });
    expect(res.json().chunks).toBeGreaterThanOrEqual(300);
    for (const i of [0, 150, 299]) {
      const hit = (await get(`/v1/corpora/${id}/search?q=service${i}&k=1`)).json().hits[0];
      expect(hit).toMatchObject({ title: `Runbook ${i}`, position: 0 });
    }
  });
});
