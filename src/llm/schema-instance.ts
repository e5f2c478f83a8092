import { RE2JS } from 're2js';
import { AppError } from '../domain/errors.js';
import type { JsonSchema } from '../domain/llm.js';
import { toRe2Syntax } from '../domain/regex-syntax.js';
import { sampleRegex } from './regex-sample.js';

/**
 * A deterministic valid instance of a JSON Schema, for the `sim` provider's answers
 * (docs/design.md#providers-and-models).
 * Covers the subset clients write for `responseFormat`; anything it cannot satisfy is best effort.
 *
 * Bounded twice (docs/design.md#providers-and-models): submission refuses schemas whose instance would be too big
 * (engine/nodes/prompt/schema-budget.ts), and this generator charges every character it emits against a hard
 * budget, ending with a clear OUTPUT_TOO_LARGE error instead of exhausting the heap.
 */
export const INSTANCE_BUDGET_CHARS = 1_000_000;

export function instanceOf(schema: JsonSchema, budgetChars = INSTANCE_BUDGET_CHARS): unknown {
  return generate(schema, { root: schema, depth: 0, budget: { left: budgetChars, total: budgetChars } });
}

interface Context {
  root: JsonSchema;
  depth: number;
  /** Characters of JSON still allowed; shared by the whole generation. */
  budget: { left: number; total: number };
}

/** Takes `chars` from the budget before they are built. */
function charge(ctx: Context, chars: number): void {
  ctx.budget.left -= chars;
  if (ctx.budget.left < 0) {
    throw new AppError(
      'OUTPUT_TOO_LARGE',
      `the simulated answer for this responseFormat would exceed ${ctx.budget.total} characters`,
    );
  }
}

const PLAIN_STRING = 'simulated';
const MAX_DEPTH = 24;

const FORMAT_EXAMPLES: Record<string, string> = {
  'date-time': '2024-01-01T00:00:00Z',
  date: '2024-01-01',
  time: '00:00:00Z',
  email: 'simulated@example.com',
  'idn-email': 'simulated@example.com',
  uri: 'https://example.com/simulated',
  'uri-reference': 'https://example.com/simulated',
  iri: 'https://example.com/simulated',
  url: 'https://example.com/simulated',
  uuid: '00000000-0000-4000-8000-000000000000',
  hostname: 'example.com',
  'idn-hostname': 'example.com',
  ipv4: '127.0.0.1',
  ipv6: '::1',
  duration: 'P1D',
  regex: '.*',
  'json-pointer': '/simulated',
};

function isSchema(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function generate(input: unknown, ctx: Context): unknown {
  if (input === false || ctx.depth > MAX_DEPTH) return null;
  if (!isSchema(input)) return PLAIN_STRING; // `true` or garbage: anything is valid
  const schema = resolveRef(input, ctx);
  if ('default' in schema) return charged(ctx, schema.default);
  if ('const' in schema) return charged(ctx, schema.const);
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return charged(ctx, schema.enum[0]);
  const next = { root: ctx.root, depth: ctx.depth + 1, budget: ctx.budget };
  if (Array.isArray(schema.allOf) && schema.allOf.length > 0) return generate(mergeAllOf(schema, next), next);
  const alternatives = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : null;
  if (alternatives && alternatives.length > 0) {
    const { anyOf: _a, oneOf: _o, ...rest } = schema;
    return generate(mergeSchemas(rest, alternatives[0]), next);
  }
  switch (pickType(schema)) {
    case 'object':
      return objectOf(schema, next);
    case 'array':
      return arrayOf(schema, next);
    case 'string':
      return stringOf(schema, ctx);
    case 'integer':
      charge(ctx, SCALAR_CHARS);
      return numberOf(schema, true);
    case 'number':
      charge(ctx, SCALAR_CHARS);
      return numberOf(schema, false);
    case 'boolean':
      charge(ctx, SCALAR_CHARS);
      return true;
    case 'null':
      charge(ctx, SCALAR_CHARS);
      return null;
    default:
      charge(ctx, PLAIN_STRING.length + 2);
      return PLAIN_STRING;
  }
}

/** Characters charged for a number, boolean or null (their JSON is short). */
const SCALAR_CHARS = 8;

/** A value copied from the schema (`default`, `const`, `enum`): bounded by the schema's own size. */
function charged(ctx: Context, value: unknown): unknown {
  charge(ctx, JSON.stringify(value)?.length ?? 4);
  return value;
}

/** Local references only (`#/$defs/x`, `#/definitions/x`): that is all a responseFormat can carry. */
function resolveRef(schema: JsonSchema, ctx: Context): JsonSchema {
  let current = schema;
  for (let hops = 0; typeof current.$ref === 'string' && hops < 8; hops++) {
    const ref = current.$ref;
    if (!ref.startsWith('#')) break;
    let target: unknown = ctx.root;
    for (const raw of ref.slice(1).split('/').filter(Boolean)) {
      const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
      target = isSchema(target) ? target[key] : undefined;
    }
    if (!isSchema(target)) break;
    const { $ref: _ref, ...siblings } = current;
    current = { ...target, ...siblings };
  }
  return current;
}

/** A type array prefers a non-null member: `["null", "string"]` reads better as a string. */
function pickType(schema: JsonSchema): string | undefined {
  const type = schema.type;
  if (typeof type === 'string') return type;
  if (Array.isArray(type)) return (type.find((t) => t !== 'null') ?? type[0]) as string | undefined;
  if (isSchema(schema.properties) || Array.isArray(schema.required) || 'additionalProperties' in schema) {
    return 'object';
  }
  if ('items' in schema || 'prefixItems' in schema || 'minItems' in schema) return 'array';
  if ('minLength' in schema || 'maxLength' in schema || 'pattern' in schema || 'format' in schema) return 'string';
  if ('minimum' in schema || 'maximum' in schema || 'multipleOf' in schema) return 'number';
  if ('exclusiveMinimum' in schema || 'exclusiveMaximum' in schema) return 'number';
  return undefined;
}

function mergeAllOf(schema: JsonSchema, ctx: Context): JsonSchema {
  const { allOf, ...rest } = schema;
  let merged: JsonSchema = rest;
  for (const part of allOf as unknown[]) if (isSchema(part)) merged = mergeSchemas(merged, resolveRef(part, ctx));
  return merged;
}

/** Object schemas merge field by field; for other keywords the later schema wins. */
function mergeSchemas(base: JsonSchema, extra: unknown): JsonSchema {
  if (!isSchema(extra)) return base;
  const merged: JsonSchema = { ...base, ...extra };
  if (isSchema(base.properties) && isSchema(extra.properties)) {
    merged.properties = { ...base.properties, ...extra.properties };
  }
  if (Array.isArray(base.required) && Array.isArray(extra.required)) {
    merged.required = [...new Set([...base.required, ...extra.required])];
  }
  if (base.type !== undefined && extra.type === undefined) merged.type = base.type;
  return merged;
}

function objectOf(schema: JsonSchema, ctx: Context): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  const properties = isSchema(schema.properties) ? schema.properties : {};
  for (const [key, propertySchema] of Object.entries(properties)) {
    charge(ctx, key.length + 4);
    result[key] = generate(propertySchema, ctx);
  }
  const additional = schema.additionalProperties;
  const extraSchema = isSchema(additional) ? additional : {};
  if (Array.isArray(schema.required)) {
    for (const key of schema.required) {
      if (typeof key === 'string' && !(key in result)) result[key] = generate(extraSchema, ctx);
    }
  }
  const minProperties = typeof schema.minProperties === 'number' ? schema.minProperties : 0;
  let size = Object.keys(result).length;
  for (let i = 1; size < minProperties && additional !== false && i <= minProperties; i++) {
    if (`extra${i}` in result) continue;
    charge(ctx, 12);
    result[`extra${i}`] = generate(extraSchema, ctx);
    size++;
  }
  return result;
}

function arrayOf(schema: JsonSchema, ctx: Context): unknown[] {
  const minItems = typeof schema.minItems === 'number' ? schema.minItems : 0;
  const maxItems = typeof schema.maxItems === 'number' ? schema.maxItems : Number.POSITIVE_INFINITY;
  // Tuples: draft 2020-12 `prefixItems`, or draft-07 `items: [...]`.
  const tuple = Array.isArray(schema.prefixItems)
    ? schema.prefixItems
    : Array.isArray(schema.items)
      ? schema.items
      : [];
  const rest = Array.isArray(schema.items) ? schema.additionalItems : schema.items;
  const length = Math.min(maxItems, Math.max(minItems, tuple.length, 1));
  const result: unknown[] = [];
  for (let i = 0; i < length; i++) {
    const itemSchema = i < tuple.length ? tuple[i] : rest;
    if (i >= tuple.length && itemSchema === false) break;
    charge(ctx, 1);
    result.push(schema.uniqueItems === true && i > 0 ? variant(itemSchema, i, ctx) : generate(itemSchema ?? {}, ctx));
  }
  return result;
}

/** The i-th distinct item for `uniqueItems`: another enum member, or a numbered string/integer. */
function variant(itemSchema: unknown, index: number, ctx: Context): unknown {
  const schema = isSchema(itemSchema) ? resolveRef(itemSchema, ctx) : {};
  if (Array.isArray(schema.enum) && index < schema.enum.length) return schema.enum[index];
  const base = generate(schema, ctx);
  if (typeof base === 'string' && !('pattern' in schema) && !('format' in schema)) return `${base}-${index}`;
  if (typeof base === 'number' && !('maximum' in schema) && !('multipleOf' in schema)) return base + index;
  return base;
}

function stringOf(schema: JsonSchema, ctx: Context): string {
  const minLength = typeof schema.minLength === 'number' ? schema.minLength : 0;
  const maxLength = typeof schema.maxLength === 'number' ? schema.maxLength : Number.POSITIVE_INFINITY;
  charge(ctx, Math.max(minLength, PLAIN_STRING.length) + 2);
  if (typeof schema.pattern === 'string') {
    const matching = stringMatching(schema.pattern, minLength, maxLength, ctx);
    if (matching !== undefined) return matching;
  }
  const formatted = typeof schema.format === 'string' ? FORMAT_EXAMPLES[schema.format] : undefined;
  if (formatted !== undefined && formatted.length >= minLength && formatted.length <= maxLength) return formatted;
  return fitLength(PLAIN_STRING, minLength, maxLength);
}

function fitLength(text: string, minLength: number, maxLength: number): string {
  let result = text;
  while (result.length < minLength) result += ` ${PLAIN_STRING}`;
  if (result.length > maxLength) result = result.slice(0, maxLength);
  return result.length < minLength ? result.padEnd(minLength, 'x') : result;
}

/**
 * Candidates from a small regex sampler; the first that really matches and fits the length wins.
 * Matching runs on RE2 (linear time), like every user pattern (docs/design.md#security).
 */
function stringMatching(pattern: string, minLength: number, maxLength: number, ctx: Context): string | undefined {
  let regex: RE2JS;
  try {
    regex = RE2JS.compile(toRe2Syntax(pattern));
  } catch {
    return undefined;
  }
  const sampled = sampleRegex(pattern, ctx.budget.left);
  if (sampled !== undefined) charge(ctx, sampled.length);
  const candidates = [sampled, PLAIN_STRING, sampled && fitLength(sampled, minLength, maxLength)];
  for (const candidate of candidates) {
    if (candidate === undefined) continue;
    if (candidate.length >= minLength && candidate.length <= maxLength && regex.test(candidate)) return candidate;
  }
  return undefined;
}

function numberOf(schema: JsonSchema, integer: boolean): number {
  const { lower, lowerExclusive, upper, upperExclusive } = bounds(schema);
  const multipleOf = typeof schema.multipleOf === 'number' && schema.multipleOf > 0 ? schema.multipleOf : undefined;
  const fits = (value: number): boolean =>
    (lower === undefined || (lowerExclusive ? value > lower : value >= lower)) &&
    (upper === undefined || (upperExclusive ? value < upper : value <= upper)) &&
    (!integer || Number.isInteger(value)) &&
    (multipleOf === undefined || Number.isInteger(value / multipleOf));
  if (fits(0)) return 0;
  const step = multipleOf ?? (integer ? 1 : undefined);
  if (step === undefined) {
    // Continuous range: the bound itself, or just inside an exclusive one.
    if (lower !== undefined) {
      const inside = lowerExclusive ? lower + (upper === undefined ? 1 : Math.min(1, (upper - lower) / 2)) : lower;
      return inside;
    }
    if (upper !== undefined) return upperExclusive ? upper - 1 : upper;
    return 0;
  }
  // Walk multiples of `step` from the nearest bound towards the range; bounded so odd schemas end.
  const start = lower !== undefined ? Math.ceil(lower / step) : Math.floor((upper ?? 0) / step);
  const direction = lower !== undefined ? 1 : -1;
  for (let i = 0; i < 1000; i++) {
    const value = Number(((start + direction * i) * step).toPrecision(12));
    if (fits(value)) return value;
  }
  return lower ?? upper ?? 0;
}

function bounds(schema: JsonSchema) {
  let lower = typeof schema.minimum === 'number' ? schema.minimum : undefined;
  let upper = typeof schema.maximum === 'number' ? schema.maximum : undefined;
  // draft-04 booleans qualify `minimum`/`maximum`; draft-06+ numbers are bounds of their own.
  let lowerExclusive = schema.exclusiveMinimum === true;
  let upperExclusive = schema.exclusiveMaximum === true;
  if (typeof schema.exclusiveMinimum === 'number' && (lower === undefined || schema.exclusiveMinimum >= lower)) {
    lower = schema.exclusiveMinimum;
    lowerExclusive = true;
  }
  if (typeof schema.exclusiveMaximum === 'number' && (upper === undefined || schema.exclusiveMaximum <= upper)) {
    upper = schema.exclusiveMaximum;
    upperExclusive = true;
  }
  return { lower, lowerExclusive, upper, upperExclusive };
}
