import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type Config, DEV_TENANT, isDevMode } from '../../config.js';
import { hashApiKey } from '../../domain/api-key.js';
import { errorBody } from './error-handler.js';
import { createRateLimiter } from './rate-limit.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The tenant every /v1 route is scoped to (docs/design.md#security). */
    tenantId: string;
  }
}

interface KeyHash {
  tenantId: string;
  hash: Buffer;
}

/** The same digest the key store keeps (domain/api-key.ts), as bytes for timingSafeEqual. */
function sha256(value: string): Buffer {
  return Buffer.from(hashApiKey(value), 'hex');
}

/** Hashed once at build time: the raw keys are not kept by the HTTP layer. */
export function hashApiKeys(config: Config): KeyHash[] {
  return config.API_KEYS.map(({ tenantId, key }) => ({ tenantId, hash: sha256(key) }));
}

/**
 * Compares the presented key against every configured hash without stopping at a match, so the
 * time taken does not reveal which (or whether an early) key matched. Hashing first gives equal
 * lengths, which timingSafeEqual requires, and hides the key length.
 */
export function findTenant(keys: readonly KeyHash[], presented: string): string | undefined {
  const candidate = sha256(presented);
  let tenant: string | undefined;
  for (const key of keys) {
    if (timingSafeEqual(candidate, key.hash) && tenant === undefined) tenant = key.tenantId;
  }
  return tenant;
}

/** Whether `presented` is the secret `hash` was made from, in time independent of where they differ. */
export function matchesSecret(presented: string, hash: Buffer): boolean {
  return timingSafeEqual(sha256(presented), hash);
}

/** The digest `matchesSecret` compares against, made once from the configured secret. */
export function secretHash(secret: string): Buffer {
  return sha256(secret);
}

export function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  return match?.[1];
}

function unauthorized(reply: FastifyReply, message: string): FastifyReply {
  return reply
    .code(401)
    .header('www-authenticate', 'Bearer')
    .send(errorBody(401, 'UNAUTHORIZED', message));
}

export function registerAuth(app: FastifyInstance, config: Config): void {
  app.decorateRequest('tenantId', '');
  const devMode = isDevMode(config);
  const keys = hashApiKeys(config);

  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    // The matched route decides; the raw URL covers requests that match no route (404s).
    const route = request.routeOptions.url ?? request.url;
    if (!route.startsWith('/v1/') && !request.url.startsWith('/v1/')) return;
    if (devMode) {
      request.tenantId = DEV_TENANT;
      return;
    }
    const token = bearerToken(request.headers.authorization);
    if (token === undefined) return unauthorized(reply, 'missing bearer token (Authorization: Bearer <key>)');
    const tenant = findTenant(keys, token);
    if (tenant === undefined) return unauthorized(reply, 'invalid API key');
    request.tenantId = tenant;
  });

  if (config.RATE_LIMIT_PER_MINUTE === 0) return;
  const limiter = createRateLimiter(config.RATE_LIMIT_PER_MINUTE);
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    if (!request.tenantId) return;
    const verdict = limiter.take(request.tenantId);
    if (verdict.allowed) return;
    return reply
      .code(429)
      .header('retry-after', String(Math.ceil(verdict.retryAfterMs / 1000)))
      .send(
        errorBody(
          429,
          'RATE_LIMITED',
          `more than ${config.RATE_LIMIT_PER_MINUTE} requests per minute for this API key`,
        ),
      );
  });
}
