import fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { registerErrorHandling } from '../../src/api/http/error-handler.js';
import { AppError, ERROR_CODES, type ErrorCode } from '../../src/domain/errors.js';

/** The one HTTP mapping answers every code with the table's status and the code itself. */
describe('HTTP answers follow ERROR_CODES', () => {
  it('every code: its status, its code, a JSON body, no message of its own for 5xx', async () => {
    const app = fastify();
    registerErrorHandling(app, {});
    app.get('/boom/:code', async (request) => {
      throw new AppError((request.params as { code: ErrorCode }).code, 'the message');
    });
    // An error that is not an AppError is a bug: a generic 500 INTERNAL.
    app.get('/bug', async () => {
      throw new Error('SELECT * FROM secrets');
    });
    await app.ready();
    for (const [code, meaning] of Object.entries(ERROR_CODES)) {
      const res = await app.inject({ method: 'GET', url: `/boom/${code}` });
      expect(res.statusCode, code).toBe(meaning.status);
      const body = res.json() as { code: string; message: string };
      expect(body.code, code).toBe(code);
      if (meaning.status >= 500) expect(body.message).not.toContain('the message');
    }
    const bug = await app.inject({ method: 'GET', url: '/bug' });
    expect(bug.json()).toMatchObject({ statusCode: 500, code: 'INTERNAL', message: 'internal error' });
    await app.close();
  });
});
