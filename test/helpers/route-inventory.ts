import type { RouteOptions } from 'fastify';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createDeps, type DepsOverrides } from '../../src/deps.js';
import type { TestApp } from './build-app.js';

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
  const config = loadConfig({ DATABASE_PATH: ':memory:', LOG_LEVEL: 'silent', ...env });
  const deps = await createDeps(config, overrides);
  const routes: RouteEntry[] = [];
  const app = await buildApp(deps, {
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
  await app.ready();
  await deps.executor.start();
  let closed: Promise<void> | undefined;
  return {
    app,
    deps,
    routes,
    close() {
      closed ??= (async () => {
        await app.close();
        await deps.close();
      })();
      return closed;
    },
  };
}
