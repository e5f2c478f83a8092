import type { FastifyInstance } from 'fastify';
import { ValidationError } from '../../domain/errors.js';
import { allowedKeysAt, closestKey } from './unknown-fields.js';

/**
 * Unknown query parameters are a 400 on every route, not silently ignored: `?statuss=failed` once
 * listed every workflow. The allowed names are the route's own querystring schema (none when it
 * declares none), checked before any other part of the request, so the typo is what the 400 names
 * even when the body is missing too. Routes left out of the API document (Swagger UI's assets, the
 * dashboard page) are not API operations and keep the browser's freedom to add cache busters.
 */
export function registerStrictQuery(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    const schema = request.routeOptions.schema;
    if (request.routeOptions.url === undefined || schema?.hide === true) return;
    const query = request.query;
    if (query === null || typeof query !== 'object') return;
    const sent = Object.keys(query);
    if (sent.length === 0) return;
    const allowed = allowedKeysAt(schema?.querystring, [], query) ?? [];
    const details = sent
      .filter((key) => !allowed.includes(key))
      .map((key) => {
        const hint = closestKey(key, allowed);
        const message =
          allowed.length === 0
            ? `unknown field "${key}"; this route takes no query parameters`
            : hint === undefined
              ? `unknown field "${key}"; the query parameters are ${allowed.join(', ')}`
              : `unknown field "${key}"; did you mean "${hint}"?`;
        return { path: `querystring.${key.slice(0, 100)}`, message };
      });
    const [first] = details;
    if (first === undefined) return;
    const more = details.length > 1 ? ` (and ${details.length - 1} more)` : '';
    throw new ValidationError(`${first.path}: ${first.message}${more}`, details.slice(0, 20));
  });
}
