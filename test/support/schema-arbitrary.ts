import { Ajv2020 } from 'ajv/dist/2020.js';
import fc from 'fast-check';

/**
 * JSON Schema (the subset zod emits into the OpenAPI document) → a fast-check arbitrary of values
 * the schema accepts: the fuzz suites start from what a route declares instead of a hand-written
 * model of it. Handles object (properties, required, additionalProperties, propertyNames), array
 * (items, minItems, maxItems), string (minLength, maxLength, pattern, enum, format date-time),
 * number/integer (minimum, maximum, exclusive bounds), boolean, null, type lists, const, enum,
 * oneOf/anyOf, OpenAPI 3.0 `nullable`, and `$ref` through a resolver. Anything else is any JSON.
 *
 * Values are kept small on purpose (strings and arrays far below their limits, a bounded depth):
 * the near-limit and over-limit values are the hostile mixins' job (hostile-requests.ts).
 */

export type JsonSchema = { [keyword: string]: unknown };

export interface SchemaArbitraryOptions {
  /** The schema a `$ref` (e.g. `#/components/schemas/WorkflowNode`) points at. */
  resolve?: (ref: string) => JsonSchema;
  /** Object and array levels after which recursive branches of oneOf/anyOf are avoided. */
  maxDepth?: number;
  /** Longest string generated where the schema allows longer. */
  maxStringLength?: number;
  /** Most array items (and extra record keys) generated where the schema allows more. */
  maxItems?: number;
  /** Strings mixed into free-form string fields (words that mean something to JavaScript, e.g. `__proto__`). */
  words?: readonly string[];
}

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

const asSchema = (value: unknown): JsonSchema =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as JsonSchema) : {};
const asNumber = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined);

/** Does the schema reach a `$ref` anywhere (a branch that may recurse)? */
function hasRef(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (!Array.isArray(value) && typeof (value as JsonSchema).$ref === 'string') return true;
  return Object.values(value).some(hasRef);
}

function integerIn(min: number, max: number): fc.Arbitrary<number> {
  if (min >= INT32_MIN && max <= INT32_MAX) return fc.integer({ min, max });
  // fc.integer is 32-bit: the small values inside the range, plus both ends.
  const low = Math.max(min, INT32_MIN);
  const high = Math.min(max, INT32_MAX);
  const inner = low <= high ? [fc.integer({ min: low, max: high })] : [];
  return fc.oneof(...inner, fc.constant(min), fc.constant(max));
}

export function schemaArbitrary(root: JsonSchema, options: SchemaArbitraryOptions = {}): fc.Arbitrary<unknown> {
  const maxDepth = options.maxDepth ?? 3;
  const maxStringLength = options.maxStringLength ?? 24;
  const maxItems = options.maxItems ?? 3;
  const words = options.words ?? [];
  // One arbitrary per ($ref, depth): recursive schemas are built once per level, not once per use.
  const refs = new Map<string, fc.Arbitrary<unknown>>();

  function build(schema: JsonSchema, depth: number): fc.Arbitrary<unknown> {
    if (typeof schema.$ref === 'string') {
      const ref = schema.$ref;
      const key = `${ref}@${depth}`;
      let arb = refs.get(key);
      if (!arb) {
        if (!options.resolve) throw new Error(`no resolver for ${ref}`);
        arb = build(options.resolve(ref), depth);
        refs.set(key, arb);
      }
      return arb;
    }
    if (schema.nullable === true) return fc.oneof(fc.constant(null), build({ ...schema, nullable: false }, depth));
    if ('const' in schema) return fc.constant(schema.const);
    if (Array.isArray(schema.enum) && schema.enum.length > 0) return fc.constantFrom(...(schema.enum as unknown[]));
    const choices = (schema.oneOf ?? schema.anyOf) as unknown[] | undefined;
    if (Array.isArray(choices) && choices.length > 0) {
      const branches = choices.map(asSchema);
      // Deep down, only branches that cannot recurse: a tree of nodes ends in leaves.
      const leaves = depth >= maxDepth ? branches.filter((b) => !hasRef(b)) : [];
      return fc.oneof(...(leaves.length > 0 ? leaves : branches).map((b) => build(b, depth)));
    }
    const type = schema.type;
    if (Array.isArray(type)) {
      return fc.oneof(...type.map((t) => build({ ...schema, type: t }, depth)));
    }
    switch (type) {
      case 'object':
        return objectOf(schema, depth);
      case 'array':
        return arrayOf(schema, depth);
      case 'string':
        return stringOf(schema);
      case 'integer':
        return integerIn(
          Math.ceil(asNumber(schema.minimum) ?? (asNumber(schema.exclusiveMinimum) ?? -1001) + 1),
          Math.floor(asNumber(schema.maximum) ?? (asNumber(schema.exclusiveMaximum) ?? 1001) - 1),
        );
      case 'number': {
        const min = asNumber(schema.minimum) ?? asNumber(schema.exclusiveMinimum) ?? -1e6;
        const max = asNumber(schema.maximum) ?? asNumber(schema.exclusiveMaximum) ?? 1e6;
        const exclusive = (n: number) => n !== schema.exclusiveMinimum && n !== schema.exclusiveMaximum;
        return fc.double({ min, max, noNaN: true, noDefaultInfinity: true }).filter(exclusive);
      }
      case 'boolean':
        return fc.boolean();
      case 'null':
        return fc.constant(null);
      default:
        if (schema.properties !== undefined || schema.additionalProperties !== undefined) {
          return objectOf(schema, depth);
        }
        if (schema.items !== undefined) return arrayOf(schema, depth);
        // `{}`: any JSON, small.
        return fc.jsonValue({ maxDepth: 2 });
    }
  }

  function objectOf(schema: JsonSchema, depth: number): fc.Arbitrary<unknown> {
    const properties = asSchema(schema.properties);
    const required = new Set(Array.isArray(schema.required) ? schema.required.map(String) : []);
    const model: Record<string, fc.Arbitrary<unknown>> = {};
    for (const [name, sub] of Object.entries(properties)) model[name] = build(asSchema(sub), depth + 1);
    const known = fc.record(model, { requiredKeys: Object.keys(model).filter((k) => required.has(k)) });
    const extra = schema.additionalProperties;
    if (extra === undefined || extra === false || depth >= maxDepth) return known;
    // A zod record (propertyNames + additionalProperties), or an open object: a few more keys.
    const key = schema.propertyNames ? build(asSchema(schema.propertyNames), depth + 1) : fc.string({ maxLength: 12 });
    const value = extra === true ? fc.jsonValue({ maxDepth: 2 }) : build(asSchema(extra), depth + 1);
    const more = fc.dictionary(key.map(String), value, { maxKeys: maxItems });
    return fc.tuple(known, more).map(([k, m]) => ({ ...m, ...k }));
  }

  function arrayOf(schema: JsonSchema, depth: number): fc.Arbitrary<unknown> {
    const minLength = asNumber(schema.minItems) ?? 0;
    const maxLength = Math.max(minLength, Math.min(asNumber(schema.maxItems) ?? maxItems, maxItems));
    // Past the depth limit, arrays stay at their minimum, so the tree ends.
    const max = depth >= maxDepth ? minLength : maxLength;
    return fc.array(build(asSchema(schema.items), depth + 1), { minLength, maxLength: max });
  }

  function stringOf(schema: JsonSchema): fc.Arbitrary<unknown> {
    const minLength = asNumber(schema.minLength) ?? 0;
    const maxLength = Math.max(minLength, Math.min(asNumber(schema.maxLength) ?? maxStringLength, maxStringLength));
    const fits = (s: string) => s.length >= minLength && s.length <= (asNumber(schema.maxLength) ?? Infinity);
    if (schema.format === 'date-time') {
      return fc
        .date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true })
        .map((d) => d.toISOString());
    }
    if (typeof schema.pattern === 'string') {
      const pattern = new RegExp(schema.pattern);
      // fc.stringMatching cannot generate lookarounds: generate without them, keep what the full pattern takes.
      const generated = new RegExp(schema.pattern.replace(/\(\?<?[=!][^()]*\)/g, ''));
      const matching = fc.stringMatching(generated).filter((s) => fits(s) && pattern.test(s));
      const named = words.filter((w) => fits(w) && pattern.test(w));
      return named.length > 0 ? fc.oneof({ arbitrary: matching, weight: 4 }, fc.constantFrom(...named)) : matching;
    }
    // Lengths as zod counts them (UTF-16 units); fast-check counts graphemes or code points.
    const text = fc
      .oneof(
        fc.string({ minLength, maxLength }),
        fc.string({ minLength, maxLength, unit: 'grapheme' }),
        fc.string({ minLength, maxLength, unit: 'binary' }),
      )
      .filter(fits);
    const named = words.filter(fits);
    return named.length > 0 ? fc.oneof({ arbitrary: text, weight: 4 }, fc.constantFrom(...named)) : text;
  }

  return build(root, 0);
}

/** Every maxLength and maxItems the schema states (through `$ref`s), so hostile values can sit at and past them. */
export function limitsIn(
  root: JsonSchema,
  resolve: (ref: string) => JsonSchema = () => ({}),
): { maxLength: number[]; maxItems: number[] } {
  const maxLength = new Set<number>();
  const maxItems = new Set<number>();
  const seen = new Set<string>();
  const walk = (value: unknown): void => {
    if (value === null || typeof value !== 'object') return;
    if (Array.isArray(value)) {
      for (const item of value) walk(item);
      return;
    }
    const schema = value as JsonSchema;
    if (typeof schema.$ref === 'string' && !seen.has(schema.$ref)) {
      seen.add(schema.$ref);
      walk(resolve(schema.$ref));
    }
    if (typeof schema.maxLength === 'number') maxLength.add(schema.maxLength);
    if (typeof schema.maxItems === 'number') maxItems.add(schema.maxItems);
    for (const [keyword, child] of Object.entries(schema)) {
      if (keyword !== 'examples' && keyword !== 'example' && keyword !== 'default') walk(child);
    }
  };
  walk(root);
  return { maxLength: [...maxLength].sort((a, b) => a - b), maxItems: [...maxItems].sort((a, b) => a - b) };
}

const DOCUMENT_ID = 'https://baton.test/openapi.json';

/**
 * A JSON Schema validator (ajv, 2020-12) for schemas of an OpenAPI document whose `$ref`s point into
 * its `components`: picks which example files a body schema takes, and checks the generator above.
 * Formats are not checked (the generator writes date-times; zod checks them on the way in).
 */
export function createSchemaValidator(
  components: Record<string, unknown>,
): (schema: JsonSchema) => (value: unknown) => boolean {
  // ajv counts lengths in code points, zod in UTF-16 units: a string zod allows is never too long for ajv.
  const ajv = new Ajv2020({ strict: false, validateFormats: false });
  ajv.addSchema({ $id: DOCUMENT_ID, components });
  // By identity: the schemas asked about are the document's own objects.
  const compiled = new WeakMap<JsonSchema, (value: unknown) => boolean>();
  return (schema) => {
    let validate = compiled.get(schema);
    if (!validate) {
      const text = JSON.stringify(schema).replaceAll('"#/components/', `"${DOCUMENT_ID}#/components/`);
      const check = ajv.compile(JSON.parse(text) as JsonSchema);
      validate = (value) => check(value) === true;
      compiled.set(schema, validate);
    }
    return validate;
  };
}

/**
 * Of branches none of which takes `value` (it is near-valid, not valid), the one it was meant for:
 * no `const` property contradicted (a node's `type`), the most of its keys declared.
 */
function closestBranch(branches: JsonSchema[], value: unknown, resolve: (ref: string) => JsonSchema): JsonSchema {
  let best = branches[0] as JsonSchema;
  let bestScore = -Infinity;
  for (const branch of branches) {
    const schema = typeof branch.$ref === 'string' ? resolve(branch.$ref) : branch;
    let score = 0;
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      const properties = asSchema(schema.properties);
      for (const [key, v] of Object.entries(value)) {
        const property = properties[key];
        if (property === undefined) continue;
        const constant = asSchema(property).const;
        score += constant === undefined ? 1 : constant === v ? 100 : -100;
      }
    } else if (schema.type === (value === null ? 'null' : typeof value)) score = 1;
    if (score > bestScore) {
      best = branch;
      bestScore = score;
    }
  }
  return best;
}

/**
 * The schema of the value at `path` inside `value` (which `root` describes): through `$ref`s, object
 * properties (or additionalProperties), array items, and of a oneOf/anyOf the branch that takes the
 * value there. `{}` (anything) where the schema says nothing.
 */
export function subschemaAt(
  root: JsonSchema,
  path: ReadonlyArray<string | number>,
  value: unknown,
  resolve: (ref: string) => JsonSchema,
  accepts: (schema: JsonSchema) => (value: unknown) => boolean,
): JsonSchema {
  const settle = (schema: JsonSchema, here: unknown): JsonSchema => {
    let current = schema;
    for (let guard = 0; guard < 20; guard++) {
      if (typeof current.$ref === 'string') {
        current = resolve(current.$ref);
        continue;
      }
      const choices = (current.oneOf ?? current.anyOf) as unknown[] | undefined;
      if (!Array.isArray(choices) || choices.length === 0) return current;
      const branches = choices.map(asSchema);
      current = branches.find((b) => accepts(b)(here)) ?? closestBranch(branches, here, resolve);
    }
    return current;
  };
  let schema = settle(root, value);
  let here = value;
  for (const key of path) {
    if (typeof key === 'number') {
      schema = asSchema(schema.items);
    } else {
      const property = asSchema(schema.properties)[key];
      const extra = schema.additionalProperties;
      schema = property !== undefined ? asSchema(property) : typeof extra === 'object' ? asSchema(extra) : {};
    }
    here = here !== null && typeof here === 'object' ? (here as Record<string | number, unknown>)[key] : undefined;
    schema = settle(schema, here);
  }
  return schema;
}
