import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
  type RouteOptions,
} from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { agentRoutes } from './api/agents.routes.js';
import { dashboardRoutes } from './api/analytics/dashboard.routes.js';
import { metricsRoutes } from './api/analytics/metrics.routes.js';
import { patternRoutes } from './api/analytics/patterns.routes.js';
import { analyticsRoutes } from './api/analytics/retrieval.routes.js';
import { selectionRoutes } from './api/analytics/selection.routes.js';
import { usageAnalyticsRoutes } from './api/analytics/usage.routes.js';
import { cacheRoutes } from './api/cache.routes.js';
import { corporaRoutes } from './api/corpora.routes.js';
import { dashboardPageRoutes } from './api/dashboard-page.routes.js';
import { healthRoutes } from './api/health.routes.js';
import { registerAuth } from './api/http/auth.js';
import { registerBodyGuard } from './api/http/body-guard.js';
import { registerDevModeGuard } from './api/http/dev-mode-guard.js';
import { docsPageOptions } from './api/http/docs-page.js';
import { type ErrorSink, errorBody, registerErrorHandling, routingErrorHandler } from './api/http/error-handler.js';
import { registerJsonBodyParser } from './api/http/json-body.js';
import { registerOpenApiMetadata, swaggerOptions } from './api/http/openapi.js';
import { registerStrictQuery } from './api/http/strict-query.js';
import { prometheusRoutes, recordHttp, registerHttpMetrics } from './api/prometheus.routes.js';
import { routingRoutes } from './api/routing.routes.js';
import { toolRoutes } from './api/tools.routes.js';
import { traceRoutes } from './api/traces.routes.js';
import { eventRoutes } from './api/workflows/events.routes.js';
import { nodeToolRoutes } from './api/workflows/node-tools.routes.js';
import { reflectionControlRoutes } from './api/workflows/reflection-control.routes.js';
import { reflectionRoutes } from './api/workflows/reflections.routes.js';
import { workflowRoutes } from './api/workflows/workflows.routes.js';
import { headersTimeoutMs } from './config.js';
import type { Deps } from './deps.js';
import { redactUrl } from './domain/redact.js';

/**
 * Longest path parameter the router passes to a route (fastify's default is 100): above every
 * route's own limit (the longest, a cache key, may have 400 characters), so the route's schema
 * decides and names the parameter.
 */
const MAX_PARAM_LENGTH = 1000;

/** Probes are polled constantly: their lines go to debug so they do not drown the rest. */
const QUIET_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

export interface BuildAppOptions {
  /**
   * Sees every route as it is added (fastify's onRoute hook, registered before any route): the
   * reliability suites enumerate the app's real routes with it instead of a hand-kept list.
   */
  onRoute?: (route: RouteOptions) => void;
}

/** The fastify instance with every route module registered explicitly (docs/design.md#architecture-and-floors). */
export async function buildApp(deps: Deps, options: BuildAppOptions = {}): Promise<FastifyInstance> {
  const { config } = deps;
  const headersTimeout = headersTimeoutMs(config);
  // Server errors kept for the onResponse log line, so a failing request still logs exactly once.
  const errors: ErrorSink = new WeakMap();
  const errorHandling = { sink: errors, unavailableRetryAfterMs: config.SHUTDOWN_GRACE_MS };
  const app = fastify({
    // Typed as fastify's base logger so the instance type stays the plain FastifyInstance.
    loggerInstance: deps.logger as FastifyBaseLogger,
    bodyLimit: config.BODY_LIMIT_BYTES,
    // Passed to http.createServer. Node enforces headersTimeout/requestTimeout only when it checks
    // its connections (every 30 s by default), so a slow-header client lived ~31 s whatever the
    // setting: checking every quarter of the headers timeout (≤ 1 s) cuts it on time (docs/design.md#security).
    http: {
      headersTimeout,
      connectionsCheckingInterval: Math.min(1_000, Math.max(100, Math.floor(headersTimeout / 4))),
    },
    requestTimeout: config.REQUEST_TIMEOUT_MS,
    // An idle-socket timeout: it must outlast the SSE keep-alive interval or it would cut streams.
    connectionTimeout: Math.max(2 * config.REQUEST_TIMEOUT_MS, 2 * config.SSE_KEEPALIVE_MS + 5_000),
    // Longer than the usual 60 s idle timeout of load balancers, so they close first.
    keepAliveTimeout: 72_000,
    // While closing, requests still arriving on open connections go through the onRequest hook
    // below like any other (fastify's own 503 has no code and no retry-after); idle keep-alive
    // sockets are closed when the server closes (main.ts lets them make one last request first).
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    // Fastify's two lines per request are replaced by the single onResponse line below.
    logController: new LogController({ disableRequestLogging: true }),
    // Under routerOptions: fastify 5 deprecates the top-level option (FSTDEP022).
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // The router's own errors (bad percent escape, over-long parameter) through the one mapping.
    // Its answers run no hooks, so their log line, metric and draining header are written here.
    frameworkErrors: (err, request, reply) => {
      if (deps.lifecycle.shuttingDown) reply.header('connection', 'close');
      reply.raw.once('finish', () => {
        logRequest(request, reply);
        recordHttp(deps.telemetry, request, reply);
      });
      return answerRoutingError(err, request, reply);
    },
  });
  const answerRoutingError = routingErrorHandler({ ...errorHandling, maxParamLength: MAX_PARAM_LENGTH });

  const { onRoute } = options;
  if (onRoute) app.addHook('onRoute', (route) => onRoute(route));

  registerJsonBodyParser(app);
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);

  // One log line per request (docs/design.md#storage); server errors ride on it instead of a second line.
  function logRequest(request: FastifyRequest, reply: FastifyReply): void {
    const err = errors.get(request);
    const line = {
      method: request.method,
      url: redactUrl(request.url),
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime * 10) / 10,
      tenant: request.tenantId || undefined,
    };
    if (err !== undefined) request.log.error({ ...line, err }, 'request failed');
    else if (QUIET_PATHS.has(pathOf(request.url))) request.log.debug(line, 'request');
    else request.log.info(line, 'request');
  }
  app.addHook('onResponse', async (request, reply) => logRequest(request, reply));

  // Registered before auth: a draining server answers 503 without looking at credentials.
  // Liveness (/healthz) still answers 200: the process is alive until it exits.
  const retryAfter = String(Math.max(1, Math.ceil(config.SHUTDOWN_GRACE_MS / 1000)));
  app.addHook('onRequest', async (request, reply) => {
    if (!deps.lifecycle.shuttingDown) return;
    // Held while main.ts closes the listener, so clients stop opening connections meanwhile.
    if (deps.lifecycle.held) await deps.lifecycle.held;
    if (pathOf(request.url) === '/healthz') return;
    return reply
      .code(503)
      .header('retry-after', retryAfter)
      .header('connection', 'close')
      .send(errorBody(503, 'SHUTTING_DOWN', 'the service is shutting down; retry later'));
  });
  // Every answer sent while draining (those already in progress at SIGTERM included) closes its
  // connection, so no client is left holding a keep-alive socket the server is about to close.
  app.addHook('onSend', async (_request, reply) => {
    if (deps.lifecycle.shuttingDown) reply.header('connection', 'close');
  });

  registerErrorHandling(app, errorHandling);
  registerDevModeGuard(app, config);
  registerAuth(app, config);
  registerStrictQuery(app);
  registerBodyGuard(app);
  registerHttpMetrics(app, deps.telemetry);

  registerOpenApiMetadata();
  await app.register(fastifySwagger, swaggerOptions);
  await app.register(fastifySwaggerUi, docsPageOptions);

  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  // A browser pointed at the service lands on the web dashboard (it links to /docs); public like /docs.
  app.get('/', { schema: { hide: true } }, async (_request, reply) => reply.redirect('/dashboard', 302));
  await app.register(dashboardPageRoutes);

  await app.register(healthRoutes, { deps });
  await app.register(workflowRoutes, { deps });
  await app.register(eventRoutes, { deps });
  await app.register(reflectionRoutes, { deps });
  await app.register(reflectionControlRoutes, { deps });
  await app.register(cacheRoutes, { deps });
  await app.register(metricsRoutes, { deps });
  await app.register(traceRoutes, { deps });
  await app.register(nodeToolRoutes, { deps });
  await app.register(analyticsRoutes, { deps });
  await app.register(routingRoutes, { deps });
  await app.register(usageAnalyticsRoutes, { deps });
  await app.register(dashboardRoutes, { deps });
  await app.register(toolRoutes, { deps });
  await app.register(corporaRoutes, { deps });
  await app.register(agentRoutes, { deps });
  await app.register(selectionRoutes, { deps });
  await app.register(patternRoutes, { deps });
  await app.register(prometheusRoutes, { metrics: deps.telemetry, token: config.METRICS_TOKEN });

  return app;
}
