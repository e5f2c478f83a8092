import type { RouteEntry } from './route-inventory.js';

/**
 * The one hand-kept list of the suites over the route inventory: the routes that answer without an
 * API key. Every other route the app registers must answer 401 without a valid key
 * (auth-tenancy.test.ts), and every route must be an OpenAPI operation with a bearer security
 * requirement unless it is listed here (route-inventory.test.ts). Adding a public route means adding
 * it here, with the reason.
 */
export interface PublicRoute {
  method: string;
  /** fastify's pattern, as the onRoute hook sees it. */
  url: string;
  /**
   * `true`: an OpenAPI operation declared with `security: []`. `false`: served with `schema.hide`, left
   * out of the document on purpose (it is not a JSON API operation).
   */
  documented: boolean;
  /** A concrete URL a client would request (the pattern with its wildcard filled). */
  sample?: string;
}

export const PUBLIC_ROUTES: readonly PublicRoute[] = [
  // Liveness and readiness probes: orchestrators call them without credentials.
  { method: 'GET', url: '/healthz', documented: true },
  { method: 'GET', url: '/readyz', documented: true },
  // Prometheus scrape endpoint, unauthenticated like the probes (README: keep it on an internal
  // network); text exposition format, not an API operation.
  { method: 'GET', url: '/metrics', documented: false },
  // The OpenAPI document itself.
  { method: 'GET', url: '/openapi.json', documented: false },
  // A browser pointed at the service is redirected to the dashboard.
  { method: 'GET', url: '/', documented: false },
  // Swagger UI (@fastify/swagger-ui registers these hidden): the page and its assets; "Try it out"
  // sends the key the user enters.
  { method: 'GET', url: '/docs', documented: false },
  { method: 'GET', url: '/docs/json', documented: false },
  { method: 'GET', url: '/docs/yaml', documented: false },
  { method: 'GET', url: '/docs/static/index.html', documented: false },
  { method: 'GET', url: '/docs/static/swagger-initializer.js', documented: false },
  { method: 'GET', url: '/docs/static/*', documented: false, sample: '/docs/static/index.css' },
  // The web dashboard: a static page and its assets; the page reads /v1 with the key the user types.
  { method: 'GET', url: '/dashboard', documented: false },
  { method: 'GET', url: '/dashboard/', documented: false },
  { method: 'GET', url: '/dashboard/app.js', documented: false },
  { method: 'GET', url: '/dashboard/style.css', documented: false },
  { method: 'GET', url: '/dashboard/vendor/uPlot.esm.js', documented: false },
  { method: 'GET', url: '/dashboard/vendor/uPlot.min.css', documented: false },
];

export const routeLabel = (route: { method: string; url: string }): string => `${route.method} ${route.url}`;

const PUBLIC_LABELS = new Set(PUBLIC_ROUTES.map(routeLabel));

export function isPublic(route: RouteEntry): boolean {
  return PUBLIC_LABELS.has(routeLabel(route));
}
