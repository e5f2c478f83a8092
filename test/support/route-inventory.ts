import type { RouteOptions } from 'fastify';
import type { DepsOverrides } from '../../src/deps.js';
import { buildTestApp, type TestApp } from './build-app.js';

/** One method + path the app serves, as fastify's onRoute hook saw it being added. */
export interface RouteEntry {
  method: string;
  /** fastify's pattern, e.g. `/v1/workflows/:id`. */
  url: string;
  /** `schema.hide`: served but left out of the OpenAPI document on purpose. */
  hidden: boolean;
  /** Declares a response schema for at least one status. */
  hasResponseSchema: boolean;
}

/**
 * A fully wired app over an in-memory database (like buildTestApp) that also returns every route it
 * registered, enumerated by an onRoute hook: suites iterate the real routes, so a route added later is
 * covered without anyone editing a list. HEAD routes fastify adds for GETs are left out.
 */
export async function buildInventoriedApp(
  env: Record<string, string> = {},
  overrides: DepsOverrides = {},
): Promise<TestApp & { routes: RouteEntry[] }> {
  const routes: RouteEntry[] = [];
  const t = await buildTestApp(env, overrides, {
    onRoute: (route: RouteOptions) => {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      const schema = route.schema as { hide?: boolean; response?: Record<string, unknown> } | undefined;
      for (const method of methods) {
        if (method === 'HEAD') continue;
        routes.push({
          method,
          url: route.url,
          hidden: schema?.hide === true,
          hasResponseSchema: schema?.response !== undefined && Object.keys(schema.response).length > 0,
        });
      }
    },
  });
  return { ...t, routes };
}
