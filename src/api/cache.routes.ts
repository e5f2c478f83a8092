import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { CachedResponseSchema, type CacheEntryInfo, type ResponseCache } from '../domain/cache.js';
import { NotFoundError } from '../domain/errors.js';
import { errorResponses } from './http/schemas.js';

/**
 * The response cache of the caller's tenant (docs/design.md#caching, docs/design.md#http-api-conventions): stats,
 * inspection, busting.
 */

/** Entries listed with the stats; enough to see what is cached without paging. */
const LISTED_ENTRIES = 50;

const PrefixSchema = z
  .string()
  .min(1)
  .max(300)
  .describe('A plain string prefix of the key (`analyst:` = every entry of agent analyst); `_` and `%` are literal.');

const KeyParamsSchema = z.object({
  key: z.string().min(1).max(400).describe('A cache key, `<agent>:<sha256 hex>` (URL-encoded).'),
});

const CacheEntryViewSchema = z
  .object({
    key: z.string(),
    namespace: z.string().describe('The agent name.'),
    sizeBytes: z.int(),
    createdAt: z.iso.datetime(),
    expiresAt: z.iso.datetime().describe('Sliding: each hit moves it forward by the TTL.'),
    hits: z.int(),
    lastHitAt: z.iso.datetime().nullable(),
    modelId: z.string(),
    tokens: z.object({ input: z.int(), output: z.int() }),
  })
  .describe('CacheEntry');

const CacheStatsViewSchema = z.object({
  hits: z.int(),
  misses: z.int(),
  hitRate: z.number().min(0).max(1).describe('hits / (hits + misses); 0 before any lookup.'),
  size: z.int().describe('Entries held in memory.'),
  sizeBytes: z.int(),
  tokensSaved: z.int().describe('Input + output tokens of every response served from the cache.'),
  costSavedUsd: z.number().describe('US dollars not spent on real providers thanks to hits.'),
  simulatedCostSavedUsd: z
    .number()
    .describe('What hits of sim/* answers would have cost at their tier price: not money, kept apart.'),
  entries: z.array(CacheEntryViewSchema).describe(`The first ${LISTED_ENTRIES} live entries in key order.`),
});

const CacheEntryDetailSchema = CacheEntryViewSchema.extend({ value: CachedResponseSchema });

const iso = (ms: number): string => new Date(ms).toISOString();

function toEntryView(info: CacheEntryInfo): z.infer<typeof CacheEntryViewSchema> {
  return {
    key: info.key,
    namespace: info.namespace,
    sizeBytes: info.sizeBytes,
    createdAt: iso(info.createdAt),
    expiresAt: iso(info.expiresAt),
    hits: info.hits,
    lastHitAt: info.lastHitAt === null ? null : iso(info.lastHitAt),
    modelId: info.modelId,
    tokens: info.tokens,
  };
}

/**
 * Reads only `deps.cache`, so it registers as `app.register(cacheRoutes, { deps })` once Deps has
 * `cache: ResponseCache`, and typechecks before that.
 */
export async function cacheRoutes(app: FastifyInstance, opts: { deps: { cache: ResponseCache } }): Promise<void> {
  const { cache } = opts.deps;
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.get(
    '/v1/cache',
    {
      schema: {
        operationId: 'getCacheStats',
        tags: ['cache'],
        summary: 'Cache statistics and entries',
        querystring: z.object({ prefix: PrefixSchema.optional() }),
        response: { 200: CacheStatsViewSchema, ...errorResponses(400, 401, 429, 500) },
        responseDescriptions: { 200: 'The statistics and the first entries.' },
      },
    },
    async (request) => {
      const stats = cache.stats(request.tenantId);
      const entries = await cache.list(request.tenantId, request.query.prefix ?? '', LISTED_ENTRIES);
      return { ...stats, entries: entries.map(toEntryView) };
    },
  );

  r.get(
    '/v1/cache/:key',
    {
      schema: {
        operationId: 'getCacheEntry',
        tags: ['cache'],
        summary: 'One cache entry and the cached response',
        description: 'Inspecting an entry does not count as a hit.',
        params: KeyParamsSchema,
        response: { 200: CacheEntryDetailSchema, ...errorResponses(400, 401, 404, 429, 500) },
        responseDescriptions: { 200: 'The entry and its cached response.' },
      },
    },
    async (request) => {
      const entry = await cache.peek(request.tenantId, request.params.key);
      if (entry === undefined) throw new NotFoundError(`cache entry ${request.params.key}`);
      return { ...toEntryView(entry), value: entry.value };
    },
  );

  r.delete(
    '/v1/cache/:key',
    {
      schema: {
        operationId: 'deleteCacheEntry',
        tags: ['cache'],
        summary: 'Bust one cache entry',
        params: KeyParamsSchema,
        response: { 204: z.null().describe('Removed.'), ...errorResponses(400, 401, 404, 429, 500) },
      },
    },
    async (request, reply) => {
      const removed = await cache.bust(request.tenantId, request.params.key);
      if (!removed) throw new NotFoundError(`cache entry ${request.params.key}`);
      return reply.code(204).send(null);
    },
  );

  r.delete(
    '/v1/cache',
    {
      schema: {
        operationId: 'deleteCacheEntries',
        tags: ['cache'],
        summary: 'Bust every cache entry whose key starts with a prefix',
        querystring: z.object({ prefix: PrefixSchema }),
        response: { 200: z.object({ deleted: z.int() }), ...errorResponses(400, 401, 429, 500) },
        responseDescriptions: { 200: 'How many entries were removed.' },
      },
    },
    async (request) => ({ deleted: await cache.bustPrefix(request.tenantId, request.query.prefix) }),
  );
}
