import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../support/build-app.js';
import { reportFigures, scale } from '../support/scale.js';
import { tempDir } from '../support/server-process.js';

/**
 * Idempotency under concurrency, over real sockets: 1 000 POSTs over 100 keys, each key sent by 10
 * concurrent duplicates, must create exactly 100 workflows; every duplicate answers 200 with the id of
 * the one 202. A key reused with another body is a 422, however many arrive at once.
 */

const KEYS = scale(100, 1_000);
const DUPLICATES = 10;
const KEY = 'tenant-a-key-0123456789';
const OTHER_KEY = 'tenant-b-key-0123456789';

const tmp = tempDir('baton-idem-');
let t: TestApp;
let base: string;

beforeAll(async () => {
  t = await buildTestApp({
    DATABASE_PATH: tmp.dbPath(),
    API_KEYS: `a:${KEY},b:${OTHER_KEY}`,
    RATE_LIMIT_PER_MINUTE: '0',
  });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await t.close();
  tmp.cleanup();
});

function body(key: number, variant = 0) {
  return {
    name: `idem-${key}`,
    input: { key, variant },
    agents: { a: { model: 'sim/sonnet' } },
    root: { type: 'prompt', name: 'only', agent: 'a', user: 'say {{input.key}}' },
  };
}

async function post(payload: string, idempotencyKey: string, apiKey = KEY) {
  const res = await fetch(`${base}/v1/workflows`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${apiKey}`,
      'content-type': 'application/json',
      'idempotency-key': idempotencyKey,
    },
    body: payload,
  });
  return { status: res.status, body: (await res.json()) as { id?: string; code?: string } };
}

/** Counted in the database itself (a second connection), not through the API: SQLite or PostgreSQL. */
async function countWorkflows(tenant: string): Promise<number> {
  const url = t.deps.config.DATABASE_URL;
  if (url) {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM workflows WHERE tenant_id = $1',
        [tenant],
      );
      return rows[0]?.n ?? 0;
    } finally {
      await client.end();
    }
  }
  const db = new Database(tmp.dbPath(), { readonly: true });
  try {
    return (db.prepare('SELECT COUNT(*) AS n FROM workflows WHERE tenant_id = ?').get(tenant) as { n: number }).n;
  } finally {
    db.close();
  }
}

describe('idempotency under concurrency', () => {
  it(`${KEYS * DUPLICATES} POSTs over ${KEYS} keys, ${DUPLICATES} concurrent duplicates each → exactly ${KEYS} workflows`, {
    timeout: 120_000,
  }, async () => {
    const started = performance.now();
    const answers = await Promise.all(
      Array.from({ length: KEYS * DUPLICATES }, (_, i) => {
        const key = i % KEYS;
        return post(JSON.stringify(body(key)), `order-${key}`).then((answer) => ({ key, ...answer }));
      }),
    );
    const elapsedMs = performance.now() - started;

    const byKey = new Map<number, typeof answers>();
    for (const answer of answers) byKey.set(answer.key, [...(byKey.get(answer.key) ?? []), answer]);
    let created = 0;
    let replayed = 0;
    for (const [key, group] of byKey) {
      const statuses = group.map((a) => a.status).sort();
      expect(statuses, `key ${key}`).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 202]);
      expect(new Set(group.map((a) => a.body.id)).size, `key ${key} answered one id`).toBe(1);
      created += statuses.filter((s) => s === 202).length;
      replayed += statuses.filter((s) => s === 200).length;
    }
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(KEYS);
    expect(await countWorkflows('a')).toBe(KEYS);

    // The same keys with another body, again all at once: every one a 422, nothing created.
    const reused = await Promise.all(
      Array.from({ length: KEYS }, (_, key) => post(JSON.stringify(body(key, 1)), `order-${key}`)),
    );
    expect(reused.map((r) => r.status)).toEqual(Array(KEYS).fill(422));
    expect(reused.every((r) => r.body.code === 'IDEMPOTENCY_KEY_REUSED')).toBe(true);
    expect(await countWorkflows('a')).toBe(KEYS);

    // Keys are per tenant: tenant b's first use of the same key creates its own workflow.
    const other = await post(JSON.stringify(body(0)), 'order-0', OTHER_KEY);
    expect(other.status).toBe(202);
    expect(other.body.id).not.toBe(byKey.get(0)?.[0]?.body.id);

    reportFigures('idempotency', {
      posts: answers.length,
      keys: KEYS,
      created,
      replayed,
      workflows: await countWorkflows('a'),
      reusedWithOtherBody422: reused.length,
      postsPerSecond: Math.round(answers.length / (elapsedMs / 1000)),
    });
  });

  it('the same body with its keys in another order is the same request (a replay, not a 422)', async () => {
    const first = await post(JSON.stringify(body(9_999)), 'reordered');
    expect(first.status).toBe(202);
    const { root, agents, input, name } = body(9_999);
    const reordered = JSON.stringify({ root, agents, input: { variant: input.variant, key: input.key }, name });
    const again = await post(reordered, 'reordered');
    expect(again).toEqual({ status: 200, body: expect.objectContaining({ id: first.body.id }) });
  });
});
