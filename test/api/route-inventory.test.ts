import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../support/build-app.js';
import { PUBLIC_ROUTES, routeLabel } from '../support/public-routes.js';
import { buildInventoriedApp, type RouteEntry } from '../support/route-inventory.js';
import { reportFigures } from '../support/scale.js';

/**
 * The route inventory: the routes the app registers, enumerated by its onRoute hook, are
 * exactly the operations of the OpenAPI document it serves, except the routes hidden on purpose,
 * which are exactly the hidden entries of the explicit public list. Every operation declares a 2xx
 * response schema and a bearer security requirement, or is on the public list and says so with
 * `security: []`. (openapi-quality.test.ts judges the document's wording and shapes, and
 * openapi-drift.test.ts the committed copy; this suite judges the document against the routes.)
 */

type Json = Record<string, any>;
interface Operation {
  method: string;
  path: string;
  op: Json;
}

const KEYS = 'a:key-of-tenant-a-0123456789,b:key-of-tenant-b-9876543210';
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'];

let t: TestApp & { routes: RouteEntry[] };
let doc: Json;
let operations: Operation[];

beforeAll(async () => {
  t = await buildInventoriedApp({ API_KEYS: KEYS });
  const served = await t.app.inject({ method: 'GET', url: '/openapi.json' });
  expect(served.statusCode).toBe(200);
  doc = served.json();
  operations = Object.entries(doc.paths as Record<string, Json>).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, op]) => ({ method: method.toUpperCase(), path, op: op as Json })),
  );
});
afterAll(async () => {
  await t.close();
});

/** fastify's `/v1/workflows/:id` as OpenAPI writes it, `/v1/workflows/{id}`. */
const openApiPath = (url: string): string => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
const opLabel = (o: Operation): string => `${o.method} ${o.path}`;
const publicEntry = (method: string, path: string) =>
  PUBLIC_ROUTES.find((p) => p.method === method && openApiPath(p.url) === path);

describe('route inventory', () => {
  it('enumerates each route once, and every public-list entry is a route the app serves', () => {
    const labels = t.routes.map(routeLabel);
    expect(labels.length).toBeGreaterThan(40);
    expect(new Set(labels).size, 'a route registered twice').toBe(labels.length);
    for (const entry of PUBLIC_ROUTES)
      expect(labels, `stale public-list entry ${routeLabel(entry)}`).toContain(routeLabel(entry));
  });

  it('hides exactly the routes the public list says are left out of the document', () => {
    const hidden = t.routes
      .filter((r) => r.hidden)
      .map(routeLabel)
      .sort();
    const listedHidden = PUBLIC_ROUTES.filter((p) => !p.documented)
      .map(routeLabel)
      .sort();
    expect(hidden).toEqual(listedHidden);
  });

  it('has one OpenAPI operation per route that is not hidden, and no other', () => {
    const fromRoutes = t.routes
      .filter((r) => !r.hidden)
      .map((r) => `${r.method} ${openApiPath(r.url)}`)
      .sort();
    const fromDocument = operations.map(opLabel).sort();
    expect(fromDocument).toEqual(fromRoutes);
  });

  it('refuses an unknown query parameter on every operation: a 400 naming it, before anything else', async () => {
    const answers: string[] = [];
    for (const route of t.routes.filter((r) => !r.hidden)) {
      const url = `${route.url.replace(/:([A-Za-z0-9_]+)/g, 'x')}?statuss=failed`;
      const res = await t.app.inject({
        method: route.method as 'GET',
        url,
        headers: { authorization: 'Bearer key-of-tenant-a-0123456789' },
      });
      const body = res.json();
      if (
        res.statusCode !== 400 ||
        body.code !== 'VALIDATION_ERROR' ||
        !body.message.startsWith('querystring.statuss:')
      )
        answers.push(`${route.method} ${url}: ${res.statusCode} ${body.message}`);
    }
    expect(answers).toEqual([]);
    const list = await t.app.inject({
      method: 'GET',
      url: '/v1/workflows?statuss=failed',
      headers: { authorization: 'Bearer key-of-tenant-a-0123456789' },
    });
    expect(list.json().message).toBe('querystring.statuss: unknown field "statuss"; did you mean "status"?');
  });

  it('declares every path parameter of every operation, as a required path parameter', () => {
    for (const o of operations) {
      const inPath = [...o.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]).sort();
      const declared = ((o.op.parameters ?? []) as Json[])
        .filter((p) => p.in === 'path')
        .map((p) => {
          expect(p.required, `${opLabel(o)} {${p.name}} is required`).toBe(true);
          return p.name as string;
        })
        .sort();
      expect(declared, opLabel(o)).toEqual(inPath);
    }
  });

  it('gives every operation (and every route behind it) a 2xx response with a schema (204: no body)', () => {
    for (const route of t.routes.filter((r) => !r.hidden)) {
      expect(route.hasResponseSchema, `${routeLabel(route)} declares no response schema`).toBe(true);
    }
    for (const o of operations) {
      const success = Object.entries(o.op.responses as Record<string, Json>).filter(([status]) =>
        /^2\d\d$/.test(status),
      );
      expect(success.length, `${opLabel(o)} has no 2xx response`).toBeGreaterThan(0);
      for (const [status, response] of success) {
        // 204 No Content is the one success without a body: it must declare none.
        if (status === '204') {
          expect(response.content, `${opLabel(o)} 204 declares a body`).toBeUndefined();
          continue;
        }
        const media = Object.values((response.content ?? {}) as Record<string, Json>);
        expect(media.length, `${opLabel(o)} ${status} has no content`).toBeGreaterThan(0);
        for (const entry of media) expect(entry.schema, `${opLabel(o)} ${status} has no schema`).toBeTypeOf('object');
      }
    }
  });

  it('requires the bearer key on every operation except the public ones, which declare security: []', () => {
    const schemes = doc.components.securitySchemes as Record<string, Json>;
    const bearerSchemes = new Set(
      Object.entries(schemes)
        .filter(([, scheme]) => scheme.type === 'http' && scheme.scheme === 'bearer')
        .map(([name]) => name),
    );
    expect(bearerSchemes.size).toBeGreaterThan(0);
    let protectedOps = 0;
    let publicOps = 0;
    for (const o of operations) {
      const entry = publicEntry(o.method, o.path);
      if (entry) {
        expect(entry.documented, `${opLabel(o)} is listed as hidden but is in the document`).toBe(true);
        expect(o.op.security, `${opLabel(o)} is public: it must say security: []`).toEqual([]);
        publicOps++;
        continue;
      }
      // An operation without its own `security` inherits the document's.
      const security = (o.op.security ?? doc.security) as Json[] | undefined;
      expect(security, `${opLabel(o)} has no security requirement`).toBeDefined();
      expect(security?.length, `${opLabel(o)} has an empty security requirement but is not public`).toBeGreaterThan(0);
      // Every alternative requirement names a bearer scheme (an empty alternative `{}` would mean "or none").
      for (const requirement of security ?? []) {
        const names = Object.keys(requirement);
        expect(names.length, `${opLabel(o)} allows an anonymous alternative`).toBeGreaterThan(0);
        expect(
          names.some((name) => bearerSchemes.has(name)),
          opLabel(o),
        ).toBe(true);
      }
      // The 401 the key's absence gets is declared too.
      expect(Object.keys(o.op.responses), opLabel(o)).toContain('401');
      protectedOps++;
    }
    reportFigures('route-inventory', {
      routes: t.routes.length,
      operations: operations.length,
      protectedOperations: protectedOps,
      publicOperations: publicOps,
      hiddenRoutes: t.routes.filter((r) => r.hidden).length,
    });
  });
});
