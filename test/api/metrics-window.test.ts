import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { definition, prompt, submit } from '../support/api-fixtures.js';
import { buildTestApp, type TestApp, waitForStatus } from '../support/build-app.js';

/** The averages cover the whole filtered window, whatever the page size; the lists page with a cursor. */
let t: TestApp;
const ids: string[] = [];
beforeAll(async () => {
  t = await buildTestApp();
  for (let i = 0; i < 5; i++) {
    const body = definition(prompt('p', { user: `windowed ${i}` }), { task: { type: 'windowed' } });
    const res = await submit(t.app, body);
    ids.push(res.json().id);
  }
  for (const id of ids) await waitForStatus(t.app, id);
});
afterAll(async () => {
  await t.close();
});

async function pages(url: string, key: 'records', id: (r: Record<string, unknown>) => string) {
  const seen: string[] = [];
  let cursor: string | null = null;
  let first: Record<string, unknown> | undefined;
  do {
    const res = await t.app.inject({ method: 'GET', url: `${url}&limit=2${cursor ? `&cursor=${cursor}` : ''}` });
    expect(res.statusCode, res.body).toBe(200);
    const body: Record<string, unknown> & { next_cursor: string | null } = res.json();
    first ??= body;
    seen.push(...(body[key] as Array<Record<string, unknown>>).map(id));
    cursor = body.next_cursor;
  } while (cursor !== null);
  return { seen, first: first as Record<string, unknown> };
}

describe('metrics lists and their averages', () => {
  it('GET /v1/metrics/efficiency: aggregate over the window, records by the page', async () => {
    const { seen, first } = await pages(
      '/v1/metrics/efficiency?taskType=windowed',
      'records',
      (r) => r.task_id as string,
    );
    expect(seen).toEqual([...ids].reverse());
    const aggregate = first.aggregate as {
      overall: { count: number };
      by_task_type: Record<string, { count: number }>;
    };
    expect(aggregate.overall.count).toBe(5);
    expect(aggregate.by_task_type.windowed?.count).toBe(5);
  });

  it('GET /v1/rewards: averages over the window, records by the page', async () => {
    const since = new Date(Date.now() - 60_000).toISOString();
    const { seen, first } = await pages(`/v1/rewards?from=${since}`, 'records', (r) => r.workflow_id as string);
    expect(seen).toEqual([...ids].reverse());
    expect((first.averages as { count: number }).count).toBe(5);
  });

  it('a malformed cursor is a 400 naming it', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/rewards?cursor=bm9wZQ' });
    expect(res.statusCode).toBe(400);
    expect(res.json().details[0].path).toBe('querystring.cursor');
  });
});
