import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatOpenApi, OPENAPI_PATH } from '../../scripts/openapi.js';
import { buildTestApp, quickStartExample, type TestApp } from '../support/build-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => {
  await t.close();
});

describe('OpenAPI document', () => {
  it('openapi/openapi.json matches what the app serves (run `npm run openapi` after changing routes)', async () => {
    const served = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(served.statusCode).toBe(200);
    const committed = await readFile(OPENAPI_PATH, 'utf8');
    expect(committed, 'openapi/openapi.json is stale: run `npm run openapi`').toBe(formatOpenApi(served.json()));
  });

  it('shows the quick-start example as the submit body example, and bearer auth', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(doc.info.title).toBe('baton');
    expect(doc.components.securitySchemes.bearerAuth).toEqual({ type: 'http', scheme: 'bearer' });
    const media = doc.paths['/v1/workflows'].post.requestBody.content['application/json'];
    expect(media.example).toEqual(quickStartExample);
    // Every $ref resolves to a component (recursive schemas are registered under an id).
    const refs = JSON.stringify(doc).match(/"#\/components\/schemas\/[^"]+"/g) ?? [];
    for (const ref of new Set(refs)) {
      const name = ref.slice('"#/components/schemas/'.length, -1);
      expect(doc.components.schemas[name], ref).toBeDefined();
    }
    expect(doc.paths['/healthz'].get.security).toEqual([]);
    expect(Object.keys(doc.paths).some((p) => p.startsWith('/docs'))).toBe(false);
  });
});
