import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, quickStartExample, type TestApp } from '../helpers/build-app.js';

/**
 * POST /v1/workflows under 5 000 fuzzed definitions per run (the hardening issue's acceptance): near-
 * valid ones (the quick start with one part replaced, removed, duplicated, renamed, nested deep or
 * blown up) and random JSON. 0 answers are 5xx, every 4xx is a JSON error with a `code` and no stack
 * trace, and Object.prototype is untouched. Seeded, so a failure replays.
 */
const RUNS_EACH = 2500;
let t: TestApp;
beforeAll(async () => {
  // The accepted ones run on the simulated model; nothing in them waits.
  t = await buildTestApp({ RATE_LIMIT_PER_MINUTE: '0' });
});
afterAll(async () => {
  await t.close();
});

type Json = unknown;

/** Every path (array of keys) into a JSON value down to the definition's own depth, the root included. */
function paths(value: Json, prefix: Array<string | number> = []): Array<Array<string | number>> {
  const out = [prefix];
  if (prefix.length >= 10) return out;
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) out.push(...paths(v, [...prefix, i]));
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) out.push(...paths(v, [...prefix, k]));
  }
  return out;
}

function setAt(root: Json, path: ReadonlyArray<string | number>, mutate: (current: Json) => Json | undefined): Json {
  if (path.length === 0) return mutate(root);
  const copy: Json = Array.isArray(root) ? [...root] : { ...(root as Record<string, Json>) };
  const [head, ...rest] = path as [string | number, ...Array<string | number>];
  const container = copy as Record<string | number, Json>;
  const next = setAt(container[head], rest, mutate);
  if (next === undefined) {
    if (Array.isArray(copy)) copy.splice(Number(head), 1);
    else delete container[head];
  } else container[head] = next;
  return copy;
}

const nasty = fc.oneof(
  fc.jsonValue(),
  fc.constantFrom(
    '',
    ' ',
    '..',
    '<script>alert(1)</script>',
    '{{steps.ghost.output}}',
    '{{input.',
    'x'.repeat(200_000),
  ),
  fc.constantFrom(-1, 0, 1e308, Number.MAX_SAFE_INTEGER, 3.5),
  fc.constantFrom({ __proto__: { polluted: true } }, { constructor: { prototype: { polluted: true } } }),
  fc.integer({ min: 60, max: 2000 }).map((depth) => JSON.parse(`${'['.repeat(depth)}1${']'.repeat(depth)}`) as Json),
  // Node trees nested far past the limit (zod's parse of them once overflowed the stack: a 500).
  fc.integer({ min: 9, max: 1500 }).map((depth) => {
    let node: Json = { type: 'prompt', name: 'leaf', agent: 'analyst', user: 'hi' };
    for (let i = 0; i < depth; i++) node = { type: 'sequence', name: `level-${i}`, steps: [node] };
    return node;
  }),
  fc.constantFrom({ type: 'array', minItems: 1e9 }, { type: 'string', pattern: '(a+)+$' }, { type: 'nope' }),
);

const mutation = fc.tuple(fc.nat(), fc.constantFrom('replace', 'remove', 'extra-key', 'wrap'), nasty, fc.string());

function mutate(base: Json, [pick, kind, value, key]: [number, string, Json, string]): Json {
  const all = paths(base);
  const path = all[pick % all.length] as Array<string | number>;
  switch (kind) {
    case 'replace':
      return setAt(base, path, () => value);
    case 'remove':
      return setAt(base, path, () => undefined) ?? {};
    case 'extra-key':
      return setAt(base, path, (current) =>
        current !== null && typeof current === 'object' && !Array.isArray(current)
          ? { ...(current as object), [key || '__proto__']: value }
          : current,
      );
    default:
      return setAt(base, path, (current) => ({ type: 'sequence', name: 'wrap', steps: [current, current] }));
  }
}

async function check(body: string): Promise<void> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/v1/workflows',
    headers: { 'content-type': 'application/json' },
    payload: body,
  });
  expect(res.statusCode, res.body).toBeLessThan(500);
  if (res.statusCode >= 400) {
    const error = res.json() as { code?: unknown; message?: unknown; statusCode?: unknown };
    expect(typeof error.code, res.body).toBe('string');
    expect(error.statusCode).toBe(res.statusCode);
    expect(String(error.message)).not.toMatch(/\n\s+at |Maximum call stack|TypeError|RangeError/);
  }
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
}

describe('POST /v1/workflows fuzzed', () => {
  it(`${RUNS_EACH} near-valid definitions: no 5xx, every 4xx a JSON error with a code`, {
    timeout: 120_000,
  }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(mutation, { minLength: 1, maxLength: 3 }), async (mutations) => {
        const body = mutations.reduce<Json>(mutate, structuredClone(quickStartExample));
        await check(JSON.stringify(body) ?? 'null');
      }),
      { numRuns: RUNS_EACH, seed: 7_270_501 },
    );
  });

  it(`${RUNS_EACH} random bodies: no 5xx, every 4xx a JSON error with a code`, { timeout: 120_000 }, async () => {
    const raw = fc.oneof(
      fc.jsonValue().map((v) => JSON.stringify(v) ?? 'null'),
      fc.string(),
      fc.constantFrom('{', '{"name":', '[]', 'null', '"text"', '{"__proto__": {"x": 1}}', '\u0000'),
    );
    await fc.assert(fc.asyncProperty(raw, check), { numRuns: RUNS_EACH, seed: 1_907_270 });
  });
});
