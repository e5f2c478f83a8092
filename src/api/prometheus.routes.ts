import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { PrometheusMetrics } from '../telemetry/prometheus.js';

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
 * `GET /metrics`: Prometheus text exposition format 0.0.4 (DESIGN §11). Outside /v1 and without
 * authentication, like the probes: the operator must keep it off the public network (bind the
 * scrape path to an internal listener or deny it at the reverse proxy). Hidden from the OpenAPI
 * document, which describes the JSON API.
 */
export async function prometheusRoutes(app: FastifyInstance, opts: { metrics: PrometheusMetrics }): Promise<void> {
  const { registry } = opts.metrics;
  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    const text = await registry.metrics();
    return reply.header('content-type', registry.contentType).header('cache-control', 'no-store').send(text);
  });
}
