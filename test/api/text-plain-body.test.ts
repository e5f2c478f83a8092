import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, quickStartExample, type TestApp } from '../support/build-app.js';

/**
 * A JSON body sent as text/plain (what `fetch(url, { method: 'POST', body: JSON.stringify(x) })` sends
 * when no content-type is set) is a 415 naming application/json. Decided over accepting it: a
 * text/plain POST is a "simple" cross-site request a browser sends without a preflight, so parsing
 * it as JSON would let any page write through a keyless or cookie-holding deployment.
 */
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => {
  await t.close();
});

describe('text/plain bodies', () => {
  it.each(['text/plain;charset=UTF-8', 'text/plain'])('answers 415 naming application/json for %s', async (type) => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/workflows',
      headers: { 'content-type': type },
      payload: JSON.stringify(quickStartExample),
    });
    expect(res.statusCode).toBe(415);
    expect(res.json()).toMatchObject({
      code: 'UNSUPPORTED_MEDIA_TYPE',
      message: 'content-type "text/plain" is not supported: send content-type: application/json',
    });
  });

  it('still accepts the same body as application/json, and bodiless POSTs with no content-type', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/workflows',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify(quickStartExample),
    });
    expect(res.statusCode).toBe(202);
    const cancel = await t.app.inject({ method: 'POST', url: `/v1/workflows/${res.json().id}/cancel` });
    expect([202, 409]).toContain(cancel.statusCode);
  });
});
