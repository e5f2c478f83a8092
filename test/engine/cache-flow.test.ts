import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { allEvents, findNode, type NodeJson, submit } from '../support/api-fixtures.js';
import { buildTestApp, type TestApp, waitForStatus } from '../support/build-app.js';
import { type FakeServer, startFakeAnthropic, textMessage } from '../support/fake-anthropic.js';

/**
 * The response cache end to end (docs/design.md#caching): the second identical run makes no provider call, even
 * after a restart on the same database; the toggles; stats; inspection and busting over HTTP.
 */
let fake: FakeServer;
const dbDir = mkdtempSync(join(tmpdir(), 'baton-cache-'));
const env = () => ({
  ANTHROPIC_API_KEY: 'sk-ant-test-key-000',
  ANTHROPIC_BASE_URL: fake.url,
  DATABASE_PATH: join(dbDir, 'baton.db'),
  CACHE_PERSIST: 'true',
});
let t: TestApp;

beforeAll(async () => {
  fake = await startFakeAnthropic({
    defaultReply: () => ({
      delayMs: 50,
      body: textMessage('{"bugs": ["off by one"], "severity": "high"}', { input_tokens: 120, output_tokens: 30 }),
    }),
  });
  t = await buildTestApp(env());
});
afterAll(async () => {
  await t?.close();
  await fake?.close();
});
beforeEach(() => {
  fake.requests.length = 0;
});

function review(code: string, extra: Record<string, unknown> = {}) {
  return {
    name: 'cached-review',
    input: { code },
    agents: { analyst: { model: 'anthropic/claude-sonnet-5-5', system: 'You review code.' } },
    root: {
      type: 'sequence',
      name: 'main',
      steps: [
        {
          type: 'prompt',
          name: 'find-bugs',
          agent: 'analyst',
          user: 'Analyze this code',
          data: { code: '{{input.code}}' },
          responseFormat: { type: 'object', required: ['bugs', 'severity'] },
          ...extra,
        },
      ],
    },
  };
}

async function run(app: TestApp, body: unknown) {
  const res = await submit(app.app, body);
  expect(res.statusCode).toBe(202);
  const id = res.json().id as string;
  return { id, done: await waitForStatus(app.app, id) };
}

async function stats(app: TestApp) {
  return (await app.app.inject({ method: 'GET', url: '/v1/cache' })).json();
}

describe('response cache', () => {
  it('serves the second identical run without a provider call and counts what it saved', async () => {
    const first = await run(t, review('let a = 1;'));
    expect(first.done.status).toBe('completed');
    expect(fake.requests).toHaveLength(1);
    const before = await stats(t);

    const second = await run(t, review('let a = 1;'));
    expect(second.done.status).toBe('completed');
    expect(second.done.output).toEqual(first.done.output);
    expect(fake.requests).toHaveLength(1);

    const events = await allEvents(t.app, second.id);
    const hit = events.find((e) => e.type === 'cacheHit');
    expect(hit?.payload).toMatchObject({ node: 'find-bugs' });
    expect(events.some((e) => e.type === 'agentPromptStart')).toBe(false);
    const key = hit?.payload.key as string;
    expect(key).toMatch(/^analyst:[0-9a-f]{64}$/);
    expect(findNode(second.done.tree as NodeJson, 'find-bugs')).toMatchObject({ cacheKeys: [key] });
    expect((await allEvents(t.app, first.id)).find((e) => e.type === 'cacheMiss')?.payload).toEqual({
      key,
      node: 'find-bugs',
    });

    const after = await stats(t);
    expect(after.hits - before.hits).toBe(1);
    expect(after.tokensSaved - before.tokensSaved).toBe(150);
    // sonnet tier: $3 / $15 per million tokens → 120·3e-6 + 30·15e-6
    expect(after.costSavedUsd - before.costSavedUsd).toBeCloseTo(0.00081, 8);
    expect(after.hitRate).toBeGreaterThan(0);

    const entry = await t.app.inject({ method: 'GET', url: `/v1/cache/${encodeURIComponent(key)}` });
    expect(entry.statusCode).toBe(200);
  });

  it('calls the provider when the prompt disables the cache, or the workflow does', async () => {
    await run(t, review('let b = 2;'));
    expect(fake.requests).toHaveLength(1);
    await run(t, review('let b = 2;', { overrides: { disableCache: true } }));
    expect(fake.requests).toHaveLength(2);
    await run(t, { ...review('let b = 2;'), options: { cache: false } });
    expect(fake.requests).toHaveLength(3);
  });

  it('collapses identical concurrent misses into one provider call', async () => {
    const runs = await Promise.all(Array.from({ length: 5 }, () => run(t, review('let c = 3;'))));
    expect(runs.every((r) => r.done.status === 'completed')).toBe(true);
    expect(fake.requests).toHaveLength(1);
  });

  it('never caches an answer that failed validation', async () => {
    fake.enqueue({ body: textMessage('{"bugs": []}') });
    const failed = await run(t, review('let d = 4;'));
    expect(failed.done.status).toBe('failed');
    const again = await run(t, review('let d = 4;'));
    expect(again.done.status).toBe('completed');
    expect(fake.requests).toHaveLength(2);
  });

  it('busts by a true prefix, tenant-scoped', async () => {
    await run(t, review('let e = 5;'));
    const listed = await t.app.inject({ method: 'GET', url: '/v1/cache?prefix=analyst:' });
    expect(listed.json().entries.length).toBeGreaterThan(0);
    const busted = await t.app.inject({ method: 'DELETE', url: '/v1/cache?prefix=analyst:' });
    expect(busted.json().deleted).toBeGreaterThan(0);
    await run(t, review('let e = 5;'));
    expect(fake.requests).toHaveLength(2);
  });

  it('survives a restart on the same database (CACHE_PERSIST=true)', async () => {
    await run(t, review('let f = 6;'));
    expect(fake.requests).toHaveLength(1);
    await t.close();
    t = await buildTestApp(env());
    const again = await run(t, review('let f = 6;'));
    expect(again.done.status).toBe('completed');
    expect(fake.requests).toHaveLength(1);
    expect((await stats(t)).hits).toBe(1);
  });
});
