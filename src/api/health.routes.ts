import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../deps.js';
import { errorBody } from './http/error-handler.js';
import { ErrorBodySchema } from './http/schemas.js';

/** The ports these routes use (route plugins get only what they need). */
type HealthRouteDeps = Pick<Deps, 'executor' | 'lifecycle' | 'queue' | 'instance'>;

/** Liveness and readiness probes: outside /v1, unauthenticated (docs/design.md#http-api-conventions). */
export async function healthRoutes(app: FastifyInstance, opts: { deps: HealthRouteDeps }): Promise<void> {
  const { deps } = opts;
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.get(
    '/healthz',
    {
      schema: {
        operationId: 'getLiveness',
        tags: ['health'],
        summary: 'Liveness: the process is up',
        security: [],
        response: {
          200: z.object({
            status: z.literal('ok'),
            instance: z.string().describe('This process: an id unique to its start (`in_…`).'),
            database: z.enum(['sqlite', 'postgres']).describe('Where its stores live (DATABASE_URL or DATABASE_PATH).'),
            leases: z
              .object({
                held: z.number().int().describe('Run leases this instance holds now.'),
                claims: z.number().int().describe('Leases it claimed since it started.'),
                losses: z.number().int().describe('Leases it lost: not renewed in time, or refused by the fence.'),
                reaps: z.number().int().describe('Expired leases (of any instance) it cleared.'),
                fenceRejections: z.number().int().describe('Commits the fence refused.'),
              })
              .optional()
              .describe('Over PostgreSQL only (docs/operations.md#scale-out): this instance’s run leases.'),
          }),
        },
        responseDescriptions: { 200: 'The process is up.' },
      },
    },
    async () => ({
      status: 'ok' as const,
      instance: deps.instance.id,
      database: deps.instance.database,
      ...(deps.instance.leases ? { leases: deps.instance.leases() } : {}),
    }),
  );

  r.get(
    '/readyz',
    {
      schema: {
        operationId: 'getReadiness',
        tags: ['health'],
        summary: 'Readiness: accepting work (503 while shutting down)',
        security: [],
        response: {
          200: z.object({ status: z.literal('ready'), running: z.int(), queued: z.int() }),
          503: ErrorBodySchema,
        },
        responseDescriptions: { 200: 'Ready: accepting work.' },
      },
    },
    async (_request, reply) => {
      if (deps.lifecycle.shuttingDown) {
        return reply.code(503).send(errorBody(503, 'SHUTTING_DOWN', 'the service is shutting down'));
      }
      return { status: 'ready' as const, running: deps.executor.running, queued: deps.queue.depth };
    },
  );
}
