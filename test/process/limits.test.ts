import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reportFigures } from '../support/scale.js';
import { type ServerProcess, startServer, stopAllServers, tempDir, waitFor } from '../support/server-process.js';

/**
 * Limits on what one client can make the real process consume (docs/design.md#security): the body limit, deep
 * nesting, slow-header clients, the per-key rate limit and the running workflows per tenant.
 * Each check prints its figures; the process must still answer at the end of every one.
 */

const KEY_A = 'limits-key-a-0123456789';
const KEY_B = 'limits-key-b-0123456789';
const KEY_RATE = 'limits-key-r-0123456789';
const asA = { authorization: `Bearer ${KEY_A}` };
const asB = { authorization: `Bearer ${KEY_B}` };
const BODY_LIMIT = 256 * 1024;
const RUNNING_PER_TENANT = 3;
const HEADERS_TIMEOUT_MS = 1_000;
const RATE_PER_MINUTE = 600;

let server: ServerProcess;
const tmp = tempDir('baton-limits-');

beforeAll(async () => {
  server = await startServer({
    dbPath: tmp.dbPath(),
    env: {
      // Tenant r has its own budget: the rate limit is per key, so a and b are not touched by r's 429s.
      API_KEYS: `a:${KEY_A},b:${KEY_B},r:${KEY_RATE}`,
      HOST: '127.0.0.1',
      BODY_LIMIT_BYTES: String(BODY_LIMIT),
      MAX_RUNNING_WORKFLOWS_PER_TENANT: String(RUNNING_PER_TENANT),
      HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
      RATE_LIMIT_PER_MINUTE: String(RATE_PER_MINUTE),
    },
  });
});
afterAll(async () => {
  await stopAllServers();
  tmp.cleanup();
});

const small = (extra: Record<string, unknown> = {}) => ({
  name: 'limits',
  agents: { a: { model: 'sim/haiku' } },
  root: { type: 'prompt', name: 'only', agent: 'a', user: 'hello' },
  ...extra,
});

async function postRaw(body: string, headers: Record<string, string> = asA) {
  const res = await fetch(`${server.url}/v1/workflows`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body,
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, json: JSON.parse(text) as Record<string, unknown> };
}

async function healthzMs(): Promise<number> {
  const started = performance.now();
  const res = await fetch(`${server.url}/healthz`);
  expect(res.status).toBe(200);
  await res.arrayBuffer();
  return performance.now() - started;
}

describe('limits (real process)', () => {
  it('a body over BODY_LIMIT_BYTES is a 413 with a JSON body; one just under it is read', async () => {
    const over = JSON.stringify(small({ input: { blob: 'x'.repeat(BODY_LIMIT + 1) } }));
    const refused = await postRaw(over);
    expect(refused.status).toBe(413);
    expect(refused.json).toMatchObject({ statusCode: 413, code: expect.any(String) });
    // Just under the limit the body is parsed and judged (accepted here).
    const underBody = small({ input: { blob: '' } });
    const room = BODY_LIMIT - Buffer.byteLength(JSON.stringify(underBody)) - 16;
    const under = await postRaw(JSON.stringify(small({ input: { blob: 'y'.repeat(room) } })));
    expect(under.status).toBe(202);
    reportFigures('limits.body', { limitBytes: BODY_LIMIT, overStatus: refused.status, underStatus: under.status });
  });

  it('10 000-level nesting is a 400 naming the depth, and the process lives on', async () => {
    const depth = 10_000;
    const deepInput = `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
    const deepArray = `${'['.repeat(depth)}1${']'.repeat(depth)}`;
    const cases = [
      JSON.stringify(small({ input: 'DEEP' })).replace('"DEEP"', deepInput),
      JSON.stringify(small({ input: { list: 'DEEP' } })).replace('"DEEP"', deepArray),
      deepInput,
    ];
    const statuses: number[] = [];
    for (const body of cases) {
      const res = await postRaw(body);
      statuses.push(res.status);
      expect(res.status).toBe(400);
      expect(res.json).toMatchObject({
        statusCode: 400,
        code: expect.any(String),
        message: expect.stringMatching(/nest|deep|depth/i),
      });
      expect(JSON.stringify(res.json)).not.toMatch(/\n\s+at |node:internal|\/src\//);
    }
    expect(server.hasExited).toBe(false);
    expect(await healthzMs()).toBeLessThan(1_000);
    reportFigures('limits.nesting', { depth, statuses });
  });

  it('slow-header clients are cut after HEADERS_TIMEOUT_MS while /healthz keeps answering', {
    timeout: 20_000,
  }, async () => {
    const { port } = new URL(server.url);
    const CLIENTS = 20;
    const openedAt = performance.now();
    const closedAfter: number[] = [];
    const sockets: Socket[] = [];
    const trickles: NodeJS.Timeout[] = [];
    for (let i = 0; i < CLIENTS; i++) {
      const socket = connect(Number(port), '127.0.0.1');
      await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
      socket.on('error', () => {});
      socket.once('close', () => closedAfter.push(performance.now() - openedAt));
      socket.write('POST /v1/workflows HTTP/1.1\r\nHost: 127.0.0.1\r\n');
      // One header byte every 100 ms: never idle, so only the headers timeout can end it.
      trickles.push(setInterval(() => socket.destroyed || socket.write('X'), 100));
      sockets.push(socket);
    }
    const probes: number[] = [];
    while (closedAfter.length < CLIENTS && performance.now() - openedAt < 8_000) {
      probes.push(await healthzMs());
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    for (const trickle of trickles) clearInterval(trickle);
    for (const socket of sockets) socket.destroy();
    expect(closedAfter.length, 'every slow-header client was cut').toBe(CLIENTS);
    expect(Math.min(...closedAfter)).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS * 0.9);
    expect(Math.max(...closedAfter)).toBeLessThan(HEADERS_TIMEOUT_MS * 3);
    expect(Math.max(...probes)).toBeLessThan(500);
    reportFigures('limits.slowHeaders', {
      clients: CLIENTS,
      headersTimeoutMs: HEADERS_TIMEOUT_MS,
      cutAfterMs: [Math.round(Math.min(...closedAfter)), Math.round(Math.max(...closedAfter))],
      healthzProbes: probes.length,
      healthzMaxMs: Math.round(Math.max(...probes) * 10) / 10,
    });
  });

  it('the per-key rate limit answers 429 with retry-after, and only to that key', async () => {
    const asR = { authorization: `Bearer ${KEY_RATE}` };
    let allowed = 0;
    let limited: { retryAfter: string | null; body: unknown } | undefined;
    for (let i = 0; i < RATE_PER_MINUTE + 50 && !limited; i++) {
      const res = await fetch(`${server.url}/v1/workflows?limit=1`, { headers: asR });
      const body: unknown = await res.json();
      if (res.status === 429) limited = { retryAfter: res.headers.get('retry-after'), body };
      else {
        expect(res.status).toBe(200);
        allowed++;
      }
    }
    expect(limited, 'no 429 within budget + 50 requests').toBeDefined();
    // The bucket refills continuously (one request per 100 ms at 600/min), so a few more than the
    // budget can pass while the loop runs; never fewer than the budget.
    expect(allowed).toBeGreaterThanOrEqual(RATE_PER_MINUTE);
    expect(Number(limited?.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(limited?.body).toMatchObject({ statusCode: 429, code: 'RATE_LIMITED' });
    const other = await fetch(`${server.url}/v1/workflows?limit=1`, { headers: asB });
    expect(other.status).toBe(200);
    reportFigures('limits.rate', {
      perMinute: RATE_PER_MINUTE,
      allowedBefore429: allowed,
      retryAfter: limited?.retryAfter,
    });
  });

  it(`a tenant never has more than ${RUNNING_PER_TENANT} workflows running; the rest wait and all complete`, {
    timeout: 30_000,
  }, async () => {
    const slow = small({
      agents: { a: { model: 'sim/haiku', simulate: { latencyMs: 300 } } },
      options: { cache: false },
    });
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await postRaw(JSON.stringify({ ...slow, name: `capped-${i}` }), asB);
      expect(res.status).toBe(202);
      ids.push(res.json.id as string);
    }
    let mostRunning = 0;
    let samples = 0;
    await waitFor(
      'every capped workflow to end',
      async () => {
        const res = await fetch(`${server.url}/v1/workflows?status=running&limit=100`, { headers: asB });
        const running = ((await res.json()) as { items: unknown[] }).items.length;
        mostRunning = Math.max(mostRunning, running);
        samples++;
        const done = await Promise.all(
          ids.map(async (id) => {
            const view = (await (await fetch(`${server.url}/v1/workflows/${id}`, { headers: asB })).json()) as {
              status: string;
            };
            return view.status === 'completed';
          }),
        );
        return done.every(Boolean);
      },
      25_000,
      50,
    );
    expect(mostRunning).toBeLessThanOrEqual(RUNNING_PER_TENANT);
    // The cap was reached, so the bound was really exercised.
    expect(mostRunning).toBe(RUNNING_PER_TENANT);
    reportFigures('limits.runningPerTenant', {
      cap: RUNNING_PER_TENANT,
      submitted: ids.length,
      mostRunningSeen: mostRunning,
      samples,
    });
  });
});
