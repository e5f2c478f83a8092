import type { FastifyInstance } from 'fastify';
import { DEFAULTS } from '../../domain/definition.js';
import { ValidationError } from '../../domain/errors.js';
import { formatPath, tooDeepPath } from '../../domain/json-depth.js';

/**
 * Refuses JSON bodies nested deeper than DEFAULTS.maxJsonDepth before anything recursive reads them
 * (zod's parse of the node tree, JSON.stringify for the idempotency hash, template rendering):
 * 10 000 levels of `input` are a 400 naming where, not a stack overflow answered with a 500.
 */
/** Bodies larger than this give the event loop back between parsing and validation. */
const YIELD_AFTER_BYTES = 64 * 1024;

export function registerBodyGuard(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    const body = request.body;
    if (body === null || typeof body !== 'object') return;
    // Parsing a large body held the event loop for milliseconds (6 ms for 340 KB); hand it back to
    // the other requests before validating, so two long synchronous stretches never run back to back.
    if (Number(request.headers['content-length'] ?? 0) > YIELD_AFTER_BYTES) await new Promise(setImmediate);
    const deep = tooDeepPath(body, DEFAULTS.maxJsonDepth);
    if (!deep) return;
    const path = formatPath(deep) || 'body';
    const message = `is nested deeper than ${DEFAULTS.maxJsonDepth} levels`;
    throw new ValidationError(`${path}: ${message}`, [{ path, message }]);
  });
}
