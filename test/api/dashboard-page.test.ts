import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../support/build-app.js';

/** The web dashboard's files: public (with API keys set), typed, under a strict CSP, not in the document. */

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ API_KEYS: 'a:key-of-tenant-a-0123456789' });
});
afterAll(async () => {
  await t.close();
});

describe('GET /dashboard and its assets', () => {
  it.each([
    ['/dashboard', 'text/html; charset=utf-8', '<script type="module" src="/dashboard/app.js">'],
    ['/dashboard/app.js', 'text/javascript; charset=utf-8', "from '/dashboard/vendor/uPlot.esm.js'"],
    ['/dashboard/style.css', 'text/css; charset=utf-8', '.span-bar'],
    ['/dashboard/vendor/uPlot.esm.js', 'text/javascript; charset=utf-8', 'export { uPlot as default }'],
    ['/dashboard/vendor/uPlot.min.css', 'text/css; charset=utf-8', '.uplot'],
  ])('%s answers 200 without a key, %s, with the CSP', async (url, type, snippet) => {
    const res = await t.app.inject({ method: 'GET', url });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe(type);
    expect(res.headers['content-security-policy']).toContain("default-src 'self'");
    expect(res.headers['content-security-policy']).toContain("script-src 'self'");
    expect(res.headers['content-security-policy']).not.toContain('unsafe-inline');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.body).toContain(snippet);
  });

  it('the page has no inline script and loads nothing from another origin', async () => {
    const html = (await t.app.inject({ method: 'GET', url: '/dashboard' })).body;
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
  });

  it('the data routes it calls keep their auth, and the page routes are not in the OpenAPI document', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/v1/dashboard' })).statusCode).toBe(401);
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/dashboard'))).toEqual([]);
  });
});
