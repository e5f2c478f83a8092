import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../support/build-app.js';

/**
 * The keyless dev mode (found by an attack: it answered any Host, so DNS rebinding read everything, and accepted
 * bodiless cross-site POSTs: `approve`, `cancel` → 202). Only loopback host names are answered, and
 * a state-changing request a browser marks as coming from another origin is refused.
 */
let dev: TestApp;
let keyed: TestApp;
const KEY = 'tenant-key-0123456789abcdef';

beforeAll(async () => {
  dev = await buildTestApp();
  keyed = await buildTestApp({ API_KEYS: `acme:${KEY}` });
});
afterAll(async () => {
  await dev.close();
  await keyed.close();
});

/** A critical workflow waits for approval: a cross-site approve or cancel would change it. */
async function waitingWorkflow(t: TestApp): Promise<string> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/v1/workflows',
    payload: {
      name: 'needs-approval',
      task: { type: 'deploy', complexity: 'critical' },
      agents: { a: { model: 'sim/haiku' } },
      root: { type: 'prompt', name: 'go', agent: 'a', user: 'deploy' },
    },
  });
  expect(res.statusCode).toBe(202);
  return res.json().id as string;
}

describe('dev mode (no API_KEYS)', () => {
  it.each(['evil.example', 'evil.example:3000', '10.0.0.5:3000', 'localhost.evil.example', '127.0.0.1.nip.io'])(
    'Host %s: 403 on every route, /v1, /metrics, /docs and /healthz alike',
    async (host) => {
      for (const url of ['/v1/workflows', '/metrics', '/docs', '/healthz', '/dashboard']) {
        const res = await dev.app.inject({ method: 'GET', url, headers: { host } });
        expect(res.statusCode, url).toBe(403);
        expect(res.json()).toMatchObject({ statusCode: 403, code: 'FORBIDDEN' });
        expect(res.json().message).toContain('loopback host');
      }
    },
  );

  it.each(['127.0.0.1:3000', 'localhost', 'LOCALHOST:8080', '[::1]:3000', '127.0.0.2'])(
    'Host %s is answered',
    async (host) => {
      const res = await dev.app.inject({ method: 'GET', url: '/v1/workflows', headers: { host } });
      expect(res.statusCode).toBe(200);
    },
  );

  it.each([
    ['a bodiless approve from another site', 'approve', { origin: 'https://evil.example' }],
    ['a cancel from another site', 'cancel', { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' }],
    ['an approve from another loopback port', 'approve', { origin: 'http://127.0.0.1:9999' }],
    ['a cancel from a sandboxed frame (Origin: null)', 'cancel', { origin: 'null' }],
    ['a cancel a browser marks same-site', 'cancel', { 'sec-fetch-site': 'same-site' }],
  ])('%s: 403, and the workflow is untouched', async (_, action, headers) => {
    const id = await waitingWorkflow(dev);
    const res = await dev.app.inject({
      method: 'POST',
      url: `/v1/workflows/${id}/${action}`,
      headers: { host: '127.0.0.1:3000', ...headers },
    });
    expect(res.statusCode).toBe(403);
    expect(res.json().message).toContain('another origin');
    const view = (await dev.app.inject({ method: 'GET', url: `/v1/workflows/${id}` })).json();
    expect(view.status).toBe('idle');
    expect(view.checkpoint).toMatchObject({ state: 'pending' });
  });

  it('the same approve from the page of its own origin, or from curl (no Origin), is accepted', async () => {
    const fromPage = await waitingWorkflow(dev);
    const page = await dev.app.inject({
      method: 'POST',
      url: `/v1/workflows/${fromPage}/approve`,
      headers: { host: '127.0.0.1:3000', origin: 'http://127.0.0.1:3000', 'sec-fetch-site': 'same-origin' },
    });
    expect(page.statusCode).toBe(202);
    const fromCurl = await waitingWorkflow(dev);
    const curl = await dev.app.inject({ method: 'POST', url: `/v1/workflows/${fromCurl}/cancel` });
    expect(curl.statusCode).toBe(202);
  });
});

describe('with API_KEYS', () => {
  it('any Host and Origin are answered: the bearer key is what authorises', async () => {
    const res = await keyed.app.inject({
      method: 'GET',
      url: '/v1/workflows',
      headers: { host: 'baton.internal.example', origin: 'https://ops.example', authorization: `Bearer ${KEY}` },
    });
    expect(res.statusCode).toBe(200);
  });
});
