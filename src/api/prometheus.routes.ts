import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { PrometheusMetrics } from '../telemetry/prometheus.js';
import { bearerToken, matchesSecret, secretHash } from './http/auth.js';
import { errorBody } from './http/error-handler.js';

/**
 * Records every answered request in the Prometheus metrics. Registered on the root instance (like
 * auth), so it sees every route. The label is the route pattern (`/v1/workflows/:id`), never the raw
 * URL, so cardinality stays bounded; requests that matched no route are labelled `unmatched`.
 */
export function registerHttpMetrics(app: FastifyInstance, metrics: PrometheusMetrics): void {
  app.addHook('onResponse', async (request, reply) => recordHttp(metrics, request, reply));
}

/** One answered request in the metrics (also called for the router's own answers, which run no hooks). */
export function recordHttp(metrics: PrometheusMetrics, request: FastifyRequest, reply: FastifyReply): void {
  metrics.observeHttp(
    request.method,
    request.routeOptions.url ?? 'unmatched',
    reply.statusCode,
    reply.elapsedTime / 1000,
  );
}

/**
 * `GET /metrics`: Prometheus text exposition format 0.0.4 (docs/design.md#http-api-conventions), outside /v1 and
 * hidden from
 * the OpenAPI document, which describes the JSON API. With METRICS_TOKEN set a scrape must bring it
 * as a bearer token (Prometheus' `authorization` scrape setting); without it the path is open like
 * the probes, and the operator keeps it off the public network. Its labels hold no client text.
 */
export async function prometheusRoutes(
  app: FastifyInstance,
  opts: { metrics: PrometheusMetrics; token: string | undefined },
): Promise<void> {
  const { registry } = opts.metrics;
  const expected = opts.token === undefined ? undefined : secretHash(opts.token);
  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    if (expected !== undefined) {
      const presented = bearerToken(request.headers.authorization);
      if (presented === undefined || !matchesSecret(presented, expected)) {
        return reply
          .code(401)
          .header('www-authenticate', 'Bearer')
          .send(errorBody(401, 'UNAUTHORIZED', '/metrics needs the METRICS_TOKEN as a bearer token'));
      }
    }
    const text = await registry.metrics();
    return reply.header('content-type', registry.contentType).header('cache-control', 'no-store').send(text);
  });
}
