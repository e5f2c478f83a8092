import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../support/build-app.js';
import { buildInventoriedApp } from '../support/route-inventory.js';

/**
 * One casing rule (README, "Field names"): the workflow, cache, events, reflection, agent and
 * corpus APIs are camelCase; the seed-shaped records and analytics (traces and spans, efficiency
 * records, rewards, the dashboard, every /v1/analytics route, the tool catalogue and its audit, the
 * complexity classifier) are snake_case; a list envelope takes its items' casing; no response
 * mixes the two. This walks every response schema of the served OpenAPI document, following
 * `$ref`s, and judges every property name it can reach.
 */

type Json = Record<string, any>;
type Casing = 'snake' | 'camel';

/** Routes whose answers are the seeds' records and analytics. */
const SNAKE_ROUTES = [
  /^\/v1\/traces/,
  /^\/v1\/metrics\//,
  /^\/v1\/workflows\/\{id\}\/metrics$/,
  /^\/v1\/workflows\/\{id\}\/feedback$/,
  /^\/v1\/rewards$/,
  /^\/v1\/dashboard$/,
  /^\/v1\/analytics\//,
  /^\/v1\/tools(\/audit)?$/,
  /^\/v1\/complexity\//,
];

/** The error body is fastify's `{ statusCode, code, error, message }` on every route, whatever its casing. */
const ERROR_KEYS = new Set(['statusCode']);

function casingOf(key: string): Casing | null {
  if (key.includes('_')) return 'snake';
  if (/[a-z0-9][A-Z]/.test(key)) return 'camel';
  return null;
}

let t: TestApp;
let doc: Json;

beforeAll(async () => {
  t = await buildInventoriedApp();
  doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
});
afterAll(async () => {
  await t.close();
});

/** Every property name reachable from a schema, with where it was found. */
function propertyNames(schema: unknown, seen: ReadonlySet<string> = new Set(), at = ''): Array<[string, string]> {
  if (schema === null || typeof schema !== 'object') return [];
  const s = schema as Json;
  if (typeof s.$ref === 'string') {
    const name = s.$ref.split('/').at(-1) as string;
    if (seen.has(name)) return [];
    return propertyNames(doc.components.schemas[name], new Set([...seen, name]), `${at}>${name}`);
  }
  const found: Array<[string, string]> = [];
  for (const [key, child] of Object.entries((s.properties ?? {}) as Json)) {
    found.push([key, `${at}.${key}`]);
    found.push(...propertyNames(child, seen, `${at}.${key}`));
  }
  for (const keyword of ['items', 'additionalProperties', 'anyOf', 'oneOf', 'allOf', 'prefixItems']) {
    const child = s[keyword];
    for (const part of Array.isArray(child) ? child : [child]) found.push(...propertyNames(part, seen, `${at}[]`));
  }
  return found;
}

interface Judged {
  label: string;
  expected: Casing;
  names: Array<[string, string]>;
}

function responses(): Judged[] {
  const judged: Judged[] = [];
  for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
    const expected: Casing = SNAKE_ROUTES.some((r) => r.test(path)) ? 'snake' : 'camel';
    for (const [method, op] of Object.entries(item)) {
      for (const [status, response] of Object.entries((op.responses ?? {}) as Json)) {
        for (const [type, content] of Object.entries((response.content ?? {}) as Json)) {
          if (!type.includes('json')) continue;
          const names = propertyNames(content.schema).filter(([key]) => !ERROR_KEYS.has(key));
          judged.push({ label: `${method.toUpperCase()} ${path} ${status}`, expected, names });
        }
      }
    }
  }
  return judged;
}

describe('response casing', () => {
  it('walks a response schema of every operation', () => {
    const judged = responses();
    expect(judged.length).toBeGreaterThan(100);
    expect(judged.filter((j) => j.expected === 'snake').length).toBeGreaterThan(20);
  });

  it('never mixes snake_case and camelCase in one response', () => {
    const mixed = responses().flatMap(({ label, names }) => {
      const snake = names.filter(([key]) => casingOf(key) === 'snake').map(([, at]) => at);
      const camel = names.filter(([key]) => casingOf(key) === 'camel').map(([, at]) => at);
      return snake.length > 0 && camel.length > 0 ? [`${label}: snake ${snake.slice(0, 3)} / camel ${camel}`] : [];
    });
    expect(mixed).toEqual([]);
  });

  it('answers the seed-shaped routes in snake_case and the workflow APIs in camelCase', () => {
    const wrong = responses().flatMap(({ label, expected, names }) =>
      names
        .filter(([key]) => {
          const casing = casingOf(key);
          return casing !== null && casing !== expected;
        })
        .map(([, at]) => `${label} (${expected}): ${at}`),
    );
    expect(wrong).toEqual([]);
  });
});
