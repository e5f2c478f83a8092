import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServerProcess, startServer, stopAllServers, tempDir } from '../helpers/server-process.js';

/** HTTP edges of the real process: body limit, bearer auth, probes, docs (DESIGN §11, §13). */

const KEY = 'acme-key-0123456789abcdef';
let server: ServerProcess;
const tmp = tempDir('baton-http-');

beforeAll(async () => {
  server = await startServer({
    dbPath: tmp.dbPath(),
    // With API keys the service leaves dev mode; HOST keeps the listener on loopback for the test.
    env: { API_KEYS: `acme:${KEY}`, HOST: '127.0.0.1' },
  });
});
afterAll(async () => {
  await stopAllServers();
  tmp.cleanup();
});

const auth = { authorization: `Bearer ${KEY}` };
const small = {
  name: 'limits',
  agents: { a: { model: 'sim/haiku' } },
  root: { type: 'prompt', name: 'only', agent: 'a', user: 'hello' },
};

describe('HTTP limits and edges (real process)', () => {
  it('listens on the configured loopback address', () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(server.logs.some((l) => l.includes('single-tenant dev mode'))).toBe(false);
  });

  it('answers 413 to a 2 MiB body', { timeout: 15_000 }, async () => {
    const body = JSON.stringify({ ...small, input: { blob: 'x'.repeat(2 * 1024 * 1024) } });
    expect(Buffer.byteLength(body)).toBeGreaterThan(2 * 1024 * 1024);
    const res = await fetch(`${server.url}/v1/workflows`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body,
    });
    expect(res.status).toBe(413);
    const json = (await res.json()) as { statusCode?: number };
    expect(json.statusCode).toBe(413);
    // The service is still fine afterwards.
    const ok = await fetch(`${server.url}/v1/workflows`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify(small),
    });
    expect(ok.status).toBe(202);
  });

  it('answers 401 without a bearer token or with a wrong one, 200 with the right one', async () => {
    const none = await fetch(`${server.url}/v1/workflows`);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    expect(((await none.json()) as { code?: string }).code).toBe('UNAUTHORIZED');

    const wrong = await fetch(`${server.url}/v1/workflows`, {
      headers: { authorization: 'Bearer not-the-key-0123456789' },
    });
    expect(wrong.status).toBe(401);
    const notBearer = await fetch(`${server.url}/v1/workflows`, { headers: { authorization: `Basic ${KEY}` } });
    expect(notBearer.status).toBe(401);
    const post = await fetch(`${server.url}/v1/workflows`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(small),
    });
    expect(post.status).toBe(401);

    const right = await fetch(`${server.url}/v1/workflows`, { headers: auth });
    expect(right.status).toBe(200);
    expect(Array.isArray(((await right.json()) as { items?: unknown }).items)).toBe(true);
  });

  it('serves /healthz and /readyz without credentials', async () => {
    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).toBe(200);
    const body = (await ready.json()) as { status: string; running: number; queued: number };
    expect(body.status).toBe('ready');
    expect(Number.isInteger(body.running)).toBe(true);
    expect(Number.isInteger(body.queued)).toBe(true);
  });

  it('serves Swagger UI at /docs and the OpenAPI document at /openapi.json', async () => {
    const docs = await fetch(`${server.url}/docs`);
    expect(docs.status).toBe(200);
    expect(docs.headers.get('content-type')).toMatch(/^text\/html/);
    expect((await docs.text()).toLowerCase()).toContain('swagger-ui');

    const spec = await fetch(`${server.url}/openapi.json`);
    expect(spec.status).toBe(200);
    const doc = (await spec.json()) as { openapi?: string; paths?: Record<string, unknown> };
    expect(doc.openapi).toMatch(/^3\./);
    expect(Object.keys(doc.paths ?? {})).toEqual(
      expect.arrayContaining([
        '/v1/workflows',
        '/v1/workflows/{id}',
        '/v1/workflows/{id}/events',
        '/healthz',
        '/readyz',
      ]),
    );
    expect(doc.paths?.['/v1/workflows']).toHaveProperty('post');
  });
});

describe('slow headers (real process)', () => {
  // DESIGN §13: headersTimeout is enforced on time, not at Node's default 30 s check interval.
  it('closes a connection still sending its headers after HEADERS_TIMEOUT_MS, while /healthz keeps answering', {
    timeout: 20_000,
  }, async () => {
    const slow = await startServer({ dbPath: tmp.dbPath('slow-headers.db'), env: { HEADERS_TIMEOUT_MS: '1000' } });
    const { port } = new URL(slow.url);
    const socket = connect(Number(port), '127.0.0.1');
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    const openedAt = Date.now();
    socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    // One header byte every 100 ms: never idle, so only the headers timeout can end it.
    const trickle = setInterval(() => {
      if (!socket.destroyed) socket.write('X');
    }, 100);
    let received = '';
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
    });
    socket.on('error', () => {});
    let closedAfter = -1;
    socket.once('close', () => {
      closedAfter = Date.now() - openedAt;
    });

    // Meanwhile, other connections are served promptly.
    const probes: number[] = [];
    while (closedAfter < 0 && Date.now() - openedAt < 6_000) {
      const started = Date.now();
      const res = await fetch(`${slow.url}/healthz`);
      expect(res.status).toBe(200);
      await res.arrayBuffer();
      probes.push(Date.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    clearInterval(trickle);
    socket.destroy();

    expect(closedAfter, 'the slow-header socket was not closed within 6 s').toBeGreaterThan(0);
    expect(closedAfter).toBeGreaterThanOrEqual(900);
    expect(closedAfter).toBeLessThan(2_500);
    expect(received).toMatch(/^HTTP\/1\.1 408/);
    expect(probes.length).toBeGreaterThan(3);
    expect(Math.max(...probes)).toBeLessThan(1_000);
  });
});
