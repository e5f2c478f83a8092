import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { registerAuth } from './api/auth.js';
import { cacheRoutes } from './api/cache.routes.js';
import { type ErrorSink, errorBody, registerErrorHandling } from './api/error-handler.js';
import { eventRoutes } from './api/events.routes.js';
import { healthRoutes } from './api/health.routes.js';
import { registerJsonBodyParser } from './api/json-body.js';
import { metricsRoutes } from './api/metrics.routes.js';
import { registerOpenApiMetadata, swaggerOptions } from './api/openapi.js';
import { prometheusRoutes, registerHttpMetrics } from './api/prometheus.routes.js';
import { reflectionRoutes } from './api/reflections.routes.js';
import { traceRoutes } from './api/traces.routes.js';
import { workflowRoutes } from './api/workflows.routes.js';
import type { Deps } from './deps.js';

/** Probes are polled constantly: their lines go to debug so they do not drown the rest. */
const QUIET_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

/** The fastify instance with every route module registered explicitly (DESIGN §1). */
export async function buildApp(deps: Deps): Promise<FastifyInstance> {
  const { config } = deps;
  const app = fastify({
    // Typed as fastify's base logger so the instance type stays the plain FastifyInstance.
    loggerInstance: deps.logger as FastifyBaseLogger,
    bodyLimit: config.BODY_LIMIT_BYTES,
    requestTimeout: config.REQUEST_TIMEOUT_MS,
    // An idle-socket timeout: it must outlast the SSE keep-alive interval or it would cut streams.
    connectionTimeout: Math.max(2 * config.REQUEST_TIMEOUT_MS, 2 * config.SSE_KEEPALIVE_MS + 5_000),
    // Longer than the usual 60 s idle timeout of load balancers, so they close first.
    keepAliveTimeout: 72_000,
    return503OnClosing: true,
    // Fastify's two lines per request are replaced by the single onResponse line below.
    logController: new LogController({ disableRequestLogging: true }),
  });
  // Slow-header clients are cut well before the whole-request timeout (DESIGN §13).
  app.server.headersTimeout = Math.min(config.REQUEST_TIMEOUT_MS, 20_000);

  registerJsonBodyParser(app);
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);

  // One log line per request (DESIGN §12); server errors ride on it instead of a second line.
  const errors: ErrorSink = new WeakMap();
  app.addHook('onResponse', async (request, reply) => {
    const err = errors.get(request);
    const line = {
      method: request.method,
      url: request.url,
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime * 10) / 10,
      tenant: request.tenantId || undefined,
    };
    if (err !== undefined) request.log.error({ ...line, err }, 'request failed');
    else if (QUIET_PATHS.has(pathOf(request.url))) request.log.debug(line, 'request');
    else request.log.info(line, 'request');
  });

  // Registered before auth: a draining server answers 503 without looking at credentials.
  const retryAfter = String(Math.max(1, Math.ceil(config.SHUTDOWN_GRACE_MS / 1000)));
  app.addHook('onRequest', async (request, reply) => {
    if (!deps.lifecycle.shuttingDown || pathOf(request.url) === '/healthz') return;
    return reply
      .code(503)
      .header('retry-after', retryAfter)
      .header('connection', 'close')
      .send(errorBody(503, 'SHUTTING_DOWN', 'the service is shutting down; retry later'));
  });

  registerErrorHandling(app, { sink: errors, unavailableRetryAfterMs: config.SHUTDOWN_GRACE_MS });
  registerAuth(app, config);
  registerHttpMetrics(app, deps.telemetry);

  registerOpenApiMetadata();
  await app.register(fastifySwagger, swaggerOptions);
  await app.register(fastifySwaggerUi, { routePrefix: '/docs' });

  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  // A browser pointed at the service lands on the API documentation; public like /docs.
  app.get('/', { schema: { hide: true } }, async (_request, reply) => reply.redirect('/docs', 302));

  await app.register(healthRoutes, { deps });
  await app.register(workflowRoutes, { deps });
  await app.register(eventRoutes, { deps });
  await app.register(reflectionRoutes, { deps });
  await app.register(cacheRoutes, { deps });
  await app.register(metricsRoutes, { deps });
  await app.register(traceRoutes, { deps });
  await app.register(prometheusRoutes, { metrics: deps.telemetry });

  return app;
}
