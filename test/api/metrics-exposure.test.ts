import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp, waitForStatus } from '../support/build-app.js';

/**
 * What `/metrics` publishes (found by an attack: `sim/<anything>` is accepted as a model, every name became a
 * label — 3 000 names took the scrape from 309 to 1 670 series — and a tenant's
 * `sim/tenant-a-secret-project-7` was readable by anyone without a key). Models are labelled by
 * provider and tier only, and METRICS_TOKEN protects the path.
 */
const SECRET_NAME = 'sim/tenant-a-secret-project-7';
const NAMES = 200;
const TOKEN = 'metrics-token-0123456789';

let open: TestApp;
let guarded: TestApp;
beforeAll(async () => {
  open = await buildTestApp();
  guarded = await buildTestApp({ METRICS_TOKEN: TOKEN });
});
afterAll(async () => {
  await open.close();
  await guarded.close();
});

async function runWith(t: TestApp, model: string): Promise<void> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/v1/workflows',
    payload: {
      name: 'named-model',
      agents: { a: { model } },
      root: { type: 'prompt', name: 'ask', agent: 'a', user: 'hello' },
      options: { cache: false },
    },
  });
  expect(res.statusCode, res.body).toBe(202);
  await waitForStatus(t.app, res.json().id);
}

const series = (text: string) => text.split('\n').filter((line) => line.startsWith('baton_llm_')).length;

describe('GET /metrics labels', () => {
  it(`${NAMES} client-chosen model names add no series, and none of them is published`, async () => {
    await runWith(open, 'sim/warm-up');
    const before = series((await open.app.inject({ method: 'GET', url: '/metrics' })).body);
    await runWith(open, SECRET_NAME);
    for (let i = 0; i < NAMES; i += 20) {
      await Promise.all(Array.from({ length: 20 }, (_, j) => runWith(open, `sim/project-${i + j}`)));
    }
    const text = (await open.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(text).not.toContain('secret-project');
    expect(text).not.toContain('project-1');
    expect(series(text) - before).toBe(0);
    expect(text).toMatch(/baton_llm_calls_total\{provider="sim",tier="other",purpose="prompt",outcome="ok"\} \d+/);
  });
});

describe('METRICS_TOKEN', () => {
  it.each([
    ['no credentials', {}],
    ['a wrong token', { authorization: 'Bearer not-the-metrics-token' }],
    ['a malformed header', { authorization: TOKEN }],
  ])('%s: 401 in the error shape', async (_, headers) => {
    const res = await guarded.app.inject({ method: 'GET', url: '/metrics', headers });
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer');
    expect(res.json()).toMatchObject({ statusCode: 401, code: 'UNAUTHORIZED' });
  });

  it('the token as a bearer token: the scrape', async () => {
    const res = await guarded.app.inject({
      method: 'GET',
      url: '/metrics',
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('baton_workflows_started_total');
  });

  it('without METRICS_TOKEN the path stays open (behind the operator network)', async () => {
    expect((await open.app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(200);
  });
});
