import { request as httpRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { definition, prompt, submit } from '../helpers/api-fixtures.js';
import { buildTestApp, type TestApp, waitForStatus } from '../helpers/build-app.js';

/**
 * Per-tenant bounds (DESIGN §13): running workflows per tenant with fair scheduling across tenants,
 * and open event streams per tenant. Judged by order of completion and by status codes, not by time.
 */
const KEY_A = 'key-of-tenant-a-0123456789';
const KEY_B = 'key-of-tenant-b-9876543210';
const asA = { authorization: `Bearer ${KEY_A}` };
const asB = { authorization: `Bearer ${KEY_B}` };

let t: TestApp;
let port: number;
beforeAll(async () => {
  t = await buildTestApp({
    API_KEYS: `a:${KEY_A},b:${KEY_B}`,
    CONCURRENCY: '2',
    MAX_RUNNING_WORKFLOWS: '4',
    MAX_RUNNING_WORKFLOWS_PER_TENANT: '3',
    MAX_SSE_STREAMS_PER_TENANT: '2',
  });
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  port = (t.app.server.address() as AddressInfo).port;
});
afterAll(async () => {
  await t.close();
});

// The cache off: identical prompts would otherwise be answered from it without the latency.
const slow = (latencyMs: number) =>
  definition(prompt('step'), {
    agents: { a: { model: 'sim/haiku', simulate: { latencyMs } } },
    options: { cache: false },
  });

describe('fair scheduling', () => {
  it("tenant B's one-step workflow does not wait behind tenant A's backlog", { timeout: 20_000 }, async () => {
    const backlog = await Promise.all(
      Array.from({ length: 24 }, async () => (await submit(t.app, slow(100), asA)).json().id as string),
    );
    const idle = await t.app.inject({ method: 'GET', url: '/v1/workflows?status=idle&limit=100', headers: asA });
    const waiting = new Set((idle.json().items as Array<{ id: string }>).map((w) => w.id));
    // The scenario needs a real backlog: most of A's workflows still wait when B arrives.
    expect(waiting.size).toBeGreaterThanOrEqual(12);
    const mine = await submit(t.app, slow(100), asB);
    expect(mine.statusCode).toBe(202);
    const done = await waitForStatus(t.app, mine.json().id, ['completed'], 15_000, asB);
    const views = await Promise.all(
      [...waiting].map(async (id) =>
        (await t.app.inject({ method: 'GET', url: `/v1/workflows/${id}`, headers: asA })).json(),
      ),
    );
    const overtook = views.filter((w) => w.status === 'completed' && w.endedAt <= (done.endedAt as string)).length;
    // Taking turns, B's workflow and its model call are served within a round of A's; in one FIFO
    // line all of A's waiting workflows would have finished first.
    expect(overtook).toBeLessThanOrEqual(3);
    for (const id of backlog) await waitForStatus(t.app, id, ['completed'], 15_000, asA);
  });

  it('one tenant never runs more than MAX_RUNNING_WORKFLOWS_PER_TENANT workflows at once', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) ids.push((await submit(t.app, slow(30), asA)).json().id);
    let most = 0;
    for (;;) {
      const page = await t.app.inject({ method: 'GET', url: '/v1/workflows?status=running&limit=100', headers: asA });
      most = Math.max(most, page.json().items.length);
      const all = await Promise.all(
        ids.map(async (id) => (await t.app.inject({ method: 'GET', url: `/v1/workflows/${id}`, headers: asA })).json()),
      );
      if (all.every((w) => w.status === 'completed')) break;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(3);
  });
});

function openStream(id: string, headers: Record<string, string>): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        path: `/v1/workflows/${id}/events`,
        headers: { accept: 'text/event-stream', ...headers },
      },
      resolve,
    );
    req.on('error', reject);
    req.end();
  });
}

async function body(res: IncomingMessage): Promise<string> {
  let text = '';
  res.setEncoding('utf8');
  for await (const chunk of res) text += chunk;
  return text;
}

describe('open event streams per tenant', () => {
  it('the stream past MAX_SSE_STREAMS_PER_TENANT is a 429 with retry-after; other tenants are unaffected', async () => {
    const a = (await submit(t.app, slow(5_000), asA)).json().id as string;
    const b = (await submit(t.app, slow(5_000), asB)).json().id as string;
    const first = await openStream(a, asA);
    const second = await openStream(a, asA);
    expect([first.statusCode, second.statusCode]).toEqual([200, 200]);

    const third = await openStream(a, asA);
    expect(third.statusCode).toBe(429);
    expect(third.headers['retry-after']).toBeDefined();
    expect(JSON.parse(await body(third))).toMatchObject({ statusCode: 429, code: 'TOO_MANY_STREAMS' });

    const other = await openStream(b, asB);
    expect(other.statusCode).toBe(200);

    // Closing a stream frees its place (as soon as the server has seen the close).
    first.destroy();
    let again = await openStream(a, asA);
    for (let tries = 0; again.statusCode === 429 && tries < 100; tries++) {
      again.resume();
      await new Promise((resolve) => setTimeout(resolve, 10));
      again = await openStream(a, asA);
    }
    expect(again.statusCode).toBe(200);
    for (const stream of [second, other, again]) stream.destroy();
    await t.app.inject({ method: 'POST', url: `/v1/workflows/${a}/cancel`, headers: asA });
    await t.app.inject({ method: 'POST', url: `/v1/workflows/${b}/cancel`, headers: asB });
  });
});
