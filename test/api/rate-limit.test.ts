import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRateLimiter } from '../../src/api/http/rate-limit.js';
import { buildTestApp, type TestApp } from '../support/build-app.js';

const KEY_A = 'key-of-tenant-a-0123456789';
const KEY_B = 'key-of-tenant-b-9876543210';
let t: TestApp;

beforeAll(async () => {
  t = await buildTestApp({ API_KEYS: `a:${KEY_A},b:${KEY_B}`, RATE_LIMIT_PER_MINUTE: '3' });
});
afterAll(async () => {
  await t.close();
});

const list = (key: string) =>
  t.app.inject({ method: 'GET', url: '/v1/workflows', headers: { authorization: `Bearer ${key}` } });

describe('per-key rate limit (RATE_LIMIT_PER_MINUTE)', () => {
  it('answers 429 with retry-after once a tenant spent its budget, without touching other tenants', async () => {
    for (let i = 0; i < 3; i++) expect((await list(KEY_A)).statusCode).toBe(200);
    const limited = await list(KEY_A);
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toMatchObject({ statusCode: 429, code: 'RATE_LIMITED' });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect((await list(KEY_B)).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
  });

  it('refills continuously: one request per 60/perMinute seconds', () => {
    let now = 0;
    const limiter = createRateLimiter(60, () => now);
    for (let i = 0; i < 60; i++) expect(limiter.take('t').allowed).toBe(true);
    expect(limiter.take('t')).toEqual({ allowed: false, retryAfterMs: 1000 });
    now = 1000;
    expect(limiter.take('t').allowed).toBe(true);
    expect(limiter.take('t').allowed).toBe(false);
  });
});
