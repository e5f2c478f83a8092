import { definition, type Json, prompt } from './api-fixtures.js';

/**
 * Definitions that once stopped the service (the hardening issue, §1): heap bombs through the
 * simulated model's schema instances, a schema that blocked the event loop while it compiled, and
 * nesting deep enough to overflow the stack. Shared by the in-process API test and the e2e test that
 * submits them to the real server process.
 */
export interface HostilePayload {
  name: string;
  /** JSON text: JSON.stringify itself overflows the stack on 10 000 levels. */
  body: string;
  /** A text the 400's message must contain: the keyword or the path it names. */
  names: string;
}

const DEEP = '__deep__';

/** The definition's JSON text with the string DEEP replaced by `{"a":{"a":…"bottom"…}}`, `depth` levels. */
function withDeepValue(body: Json, depth: number): string {
  return JSON.stringify(body).replace(`"${DEEP}"`, `${'{"a":'.repeat(depth)}"bottom"${'}'.repeat(depth)}`);
}

function nestedSequences(depth: number): Json {
  let node: Json = prompt('leaf');
  for (let i = 0; i < depth; i++) node = { type: 'sequence', name: `level-${i}`, steps: [node] };
  return node;
}

function withSchema(responseFormat: Json): string {
  return JSON.stringify(definition(prompt('p', { responseFormat })));
}

const arrayOf = (inner: Json, minItems: number): Json => ({ type: 'array', minItems, items: inner });

function wideSchema(properties: number): Json {
  const shape: Json = {};
  for (let i = 0; i < properties; i++) shape[`field_${i}`] = { type: 'string', pattern: `^[a-z]{1,${(i % 50) + 1}}$` };
  return { type: 'object', properties: shape, required: Object.keys(shape) };
}

export const HOSTILE_DEFINITIONS: readonly HostilePayload[] = [
  {
    name: 'nested minItems 3000 × 3000 × 3000 (2.7·10¹⁰ elements)',
    body: withSchema(arrayOf(arrayOf(arrayOf({ type: 'string' }, 3000), 3000), 3000)),
    names: 'minItems',
  },
  { name: 'minItems 30 000 000', body: withSchema({ type: 'array', minItems: 30_000_000 }), names: 'minItems' },
  { name: 'minLength 50 000 000', body: withSchema({ type: 'string', minLength: 50_000_000 }), names: 'minLength' },
  {
    name: 'minProperties 10 000 000',
    body: withSchema({ type: 'object', minProperties: 10_000_000 }),
    names: 'minProperties',
  },
  { name: 'pattern ^a{50000000}$', body: withSchema({ type: 'string', pattern: '^a{50000000}$' }), names: 'pattern' },
  {
    name: 'a ~250 KB schema of 5 000 patterned properties',
    body: withSchema(wideSchema(5000)),
    names: 'root.responseFormat',
  },
  {
    name: '1 000 nested sequences',
    body: JSON.stringify(definition(nestedSequences(1000))),
    names: 'root.steps.0.steps.0',
  },
  {
    name: '10 000 levels in input',
    body: withDeepValue(definition(prompt('p'), { input: DEEP }), 10_000),
    names: 'input',
  },
  {
    name: '10 000 levels in data',
    body: withDeepValue(definition(prompt('p', { data: { x: DEEP } })), 10_000),
    names: 'root.data',
  },
  {
    name: '10 000 levels in simulate.json',
    body: withDeepValue(
      definition(prompt('p'), { agents: { a: { model: 'sim/sonnet', simulate: { responses: [{ json: DEEP }] } } } }),
      10_000,
    ),
    names: 'agents.a.simulate',
  },
];

/** Accepted (the engine is linear-time), and the answer is refused by the pattern without backtracking. */
export const REDOS_DEFINITION: Json = definition(
  prompt('p', { responseFormat: { type: 'string', pattern: '^(a+)+$' } }),
  { agents: { a: { model: 'sim/sonnet', simulate: { responses: [{ json: `${'a'.repeat(28)}!` }] } } } },
);
