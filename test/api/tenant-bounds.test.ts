import { request as httpRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { definition, prompt, submit } from '../support/api-fixtures.js';
import { buildTestApp, type TestApp, waitForStatus } from '../support/build-app.js';
import { advanceUntil, createManualClock, settleEventLoop } from '../support/manual-clock.js';

/**
 * Per-tenant bounds (docs/design.md#security): running workflows per tenant with fair scheduling across tenants,
 * and open event streams per tenant. Judged by the order of published events and by status codes,
 * not by time: simulated latencies run on a manual clock the tests advance.
 */
const KEY_A = 'key-of-tenant-a-0123456789';
const KEY_B = 'key-of-tenant-b-9876543210';
const asA = { authorization: `Bearer ${KEY_A}` };
const asB = { authorization: `Bearer ${KEY_B}` };

const clock = createManualClock();
/** Every workflowStart and workflowEnd published, in publication order. */
const lifecycle: Array<{ type: 'workflowStart' | 'workflowEnd'; workflowId: string }> = [];
const hasEnded = (id: string) => lifecycle.some((e) => e.type === 'workflowEnd' && e.workflowId === id);

let t: TestApp;
let port: number;
beforeAll(async () => {
  t = await buildTestApp(
    {
      API_KEYS: `a:${KEY_A},b:${KEY_B}`,
      CONCURRENCY: '2',
      MAX_RUNNING_WORKFLOWS: '4',
      MAX_RUNNING_WORKFLOWS_PER_TENANT: '3',
      MAX_SSE_STREAMS_PER_TENANT: '2',
    },
    { clock },
  );
  t.deps.events.subscribeAll(({ type, workflowId }) => {
    if (type === 'workflowStart' || type === 'workflowEnd') lifecycle.push({ type, workflowId });
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
  it("tenant B's one-step workflow does not wait behind tenant A's backlog", async () => {
    const backlog = await Promise.all(
      Array.from({ length: 24 }, async () => (await submit(t.app, slow(100), asA)).json().id as string),
    );
    await settleEventLoop();
    const idle = await t.app.inject({ method: 'GET', url: '/v1/workflows?status=idle&limit=100', headers: asA });
    const waiting = new Set((idle.json().items as Array<{ id: string }>).map((w) => w.id));
    // The scenario needs a real backlog: most of A's workflows still wait when B arrives.
    expect(waiting.size).toBeGreaterThanOrEqual(12);
    const mine = await submit(t.app, slow(100), asB);
    expect(mine.statusCode).toBe(202);
    const mineId = mine.json().id as string;
    await advanceUntil(clock, () => hasEnded(mineId), { unmet: () => "B's workflow has not ended" });
    expect((await waitForStatus(t.app, mineId, ['completed'], 5_000, asB)).status).toBe('completed');
    const endedFirst = lifecycle.slice(
      0,
      lifecycle.findIndex((e) => e.type === 'workflowEnd' && e.workflowId === mineId),
    );
    const overtook = endedFirst.filter((e) => e.type === 'workflowEnd' && waiting.has(e.workflowId)).length;
    // Taking turns, B's workflow and its model call are served within a round of A's; in one FIFO
    // line all of A's waiting workflows would have finished first.
    expect(overtook).toBeLessThanOrEqual(3);
    await advanceUntil(clock, () => backlog.every(hasEnded), { unmet: () => "A's backlog has not ended" });
    for (const id of backlog) await waitForStatus(t.app, id, ['completed'], 5_000, asA);
  });

  it('one tenant never runs more than MAX_RUNNING_WORKFLOWS_PER_TENANT workflows at once', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) ids.push((await submit(t.app, slow(30), asA)).json().id);
    await settleEventLoop();
    // Nothing ends before the clock moves: the API shows exactly the bound running.
    const page = await t.app.inject({ method: 'GET', url: '/v1/workflows?status=running&limit=100', headers: asA });
    expect(page.json().items).toHaveLength(3);
    await advanceUntil(clock, () => ids.every(hasEnded), { unmet: () => "A's workflows have not all ended" });
    // Running at once, by the published starts and ends (a workflow's slot is freed only after its
    // workflowEnd is published): the most at any point is the bound, never more.
    let running = 0;
    let most = 0;
    for (const event of lifecycle) {
      if (!ids.includes(event.workflowId)) continue;
      running += event.type === 'workflowStart' ? 1 : -1;
      most = Math.max(most, running);
    }
    expect(most).toBe(3);
    for (const id of ids) expect((await waitForStatus(t.app, id, ['completed'], 5_000, asA)).status).toBe('completed');
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

    // Closing a stream frees its place (as soon as the server has seen the close). Polled: the
    // moment the server's HTTP stack notices the client's TCP close is not an event baton publishes.
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
