import { jsonBytesWithin } from '../../../domain/json-size.js';
import type { JsonSchema } from '../../../domain/llm.js';
import { compileUserPattern, patternError } from './user-pattern.js';

/**
 * The budget of a user-supplied JSON Schema (`responseFormat`, docs/design.md#providers-and-models,
 * docs/design.md#security), checked at
 * submission before anything compiles or generates from it:
 * - size and shape: bytes of its JSON, subschemas, nesting — so compiling any accepted schema
 *   costs milliseconds (ajv's compile time grows with the subschemas, ~0.2 ms each here);
 * - patterns: each one must compile on the linear-time engine (RE2: no lookaround, no
 *   backreference, repetition counts ≤ 1000) and stay short;
 * - the instance the simulated model would build: `minItems`, `minProperties`, `minLength` and
 *   pattern repetitions multiply through nesting; their product is estimated here, so a schema
 *   asking for 2.7·10¹⁰ elements is a 400 naming the keyword, not a heap bomb. The generator
 *   (src/llm/schema-instance.ts) enforces a hard size budget of its own as the second line.
 */
export const SCHEMA_BUDGET = {
  bytes: 32 * 1024,
  subschemas: 128,
  depth: 16,
  patterns: 32,
  patternChars: 256,
  /** Characters of JSON of the smallest instance the schema admits (estimated). */
  instanceChars: 100_000,
} as const;

export interface BudgetIssue {
  path: string;
  message: string;
}

const SINGLE = [
  'additionalProperties',
  'items',
  'additionalItems',
  'contains',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
  'unevaluatedItems',
  'unevaluatedProperties',
] as const;
const LISTS = ['items', 'prefixItems', 'allOf', 'anyOf', 'oneOf'] as const;
const MAPS = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'] as const;

const isSchema = (value: unknown): value is JsonSchema =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Schema objects already found within the budget: a schema shared by many steps is walked once. */
const withinBudget = new WeakSet<JsonSchema>();

/** Every issue of the schema at `path` (empty when it fits the budget). */
export function checkSchemaBudget(schema: JsonSchema, path: string): BudgetIssue[] {
  if (withinBudget.has(schema)) return [];
  const issues = budgetIssues(schema, path);
  if (issues.length === 0) withinBudget.add(schema);
  return issues;
}

function budgetIssues(schema: JsonSchema, path: string): BudgetIssue[] {
  if (jsonBytesWithin(schema, SCHEMA_BUDGET.bytes) === undefined) {
    return [{ path, message: `is more than ${SCHEMA_BUDGET.bytes} bytes of JSON Schema, its limit` }];
  }
  const issues = checkShape(schema, path);
  if (issues.length > 0) return issues;
  const estimate = new InstanceEstimate(schema);
  estimate.size(schema, path, 0);
  return estimate.issue ? [estimate.issue] : [];
}

function checkShape(root: JsonSchema, rootPath: string): BudgetIssue[] {
  const issues: BudgetIssue[] = [];
  let subschemas = 0;
  let patterns = 0;
  const checkPattern = (pattern: unknown, where: string): void => {
    if (typeof pattern !== 'string') return;
    patterns++;
    if (patterns === SCHEMA_BUDGET.patterns + 1) {
      issues.push({ path: where, message: `is one pattern too many; a schema may hold ${SCHEMA_BUDGET.patterns}` });
    }
    if (pattern.length > SCHEMA_BUDGET.patternChars) {
      issues.push({
        path: where,
        message: `is ${pattern.length} characters; the limit is ${SCHEMA_BUDGET.patternChars}`,
      });
      return;
    }
    try {
      compileUserPattern(pattern);
    } catch (err) {
      issues.push({
        path: where,
        message: `is not supported by the linear-time regex engine (no lookaround or backreferences, repetition counts at most 1000): ${patternError(err)}`,
      });
    }
  };
  const visit = (schema: unknown, path: string, depth: number): void => {
    if (!isSchema(schema)) return;
    subschemas++;
    if (subschemas === SCHEMA_BUDGET.subschemas + 1) {
      issues.push({ path, message: `is one subschema too many; a schema may hold ${SCHEMA_BUDGET.subschemas}` });
    }
    if (depth > SCHEMA_BUDGET.depth) {
      issues.push({ path, message: `is nested deeper than ${SCHEMA_BUDGET.depth} subschemas` });
      return;
    }
    checkPattern(schema.pattern, `${path}.pattern`);
    if (isSchema(schema.patternProperties)) {
      for (const key of Object.keys(schema.patternProperties)) checkPattern(key, `${path}.patternProperties`);
    }
    for (const keyword of SINGLE)
      if (isSchema(schema[keyword])) visit(schema[keyword], `${path}.${keyword}`, depth + 1);
    for (const keyword of LISTS) {
      const list = schema[keyword];
      if (!Array.isArray(list)) continue;
      for (const [i, item] of list.entries()) visit(item, `${path}.${keyword}.${i}`, depth + 1);
    }
    for (const keyword of MAPS) {
      const map = schema[keyword];
      if (isSchema(map))
        for (const [key, item] of Object.entries(map)) visit(item, `${path}.${keyword}.${key}`, depth + 1);
    }
  };
  visit(root, rootPath, 0);
  return issues;
}

/** Beyond this many `$ref` hops deep the generator answers `null`; the estimate stops there too. */
const MAX_REF_DEPTH = 24;
const CAP = 1e12;
const PLAIN = 11; // `"simulated"`
const SCALAR = 8;

/**
 * The JSON size of the smallest instance the simulated model builds, mirroring its rules (first
 * alternative of anyOf/oneOf, all properties, minimum counts). Saturates at CAP; the first node
 * whose own size crosses the budget is reported, with the keyword that made it big.
 */
class InstanceEstimate {
  issue: BudgetIssue | undefined;

  constructor(private readonly root: JsonSchema) {}

  size(input: unknown, path: string, refDepth: number): number {
    if (input === false) return 4;
    if (!isSchema(input)) return PLAIN;
    if (refDepth > MAX_REF_DEPTH) return 4;
    const schema = this.resolve(input);
    const viaRef = schema === input ? refDepth : refDepth + 1;
    if ('default' in schema || 'const' in schema) return jsonLength(schema.default ?? schema.const);
    if (Array.isArray(schema.enum) && schema.enum.length > 0) return jsonLength(schema.enum[0]);
    let size = 0;
    let keyword = 'type';
    const parts: Array<[unknown, string]> = [
      ...list(schema.allOf).map((part, i): [unknown, string] => [part, `${path}.allOf.${i}`]),
      ...list(schema.anyOf)
        .slice(0, 1)
        .map((part): [unknown, string] => [part, `${path}.anyOf.0`]),
      ...list(schema.oneOf)
        .slice(0, 1)
        .map((part): [unknown, string] => [part, `${path}.oneOf.0`]),
    ];
    for (const [part, partPath] of parts) size = saturate(size + this.size(part, partPath, viaRef));
    const own = this.own(schema, path, viaRef);
    if (own.size > size) keyword = own.keyword;
    size = Math.max(size, own.size);
    if (size > SCHEMA_BUDGET.instanceChars && this.issue === undefined) {
      this.issue = {
        path: `${path}.${keyword}`,
        message: `asks the simulated model for an instance of about ${format(size)} characters (through nesting); the limit is ${SCHEMA_BUDGET.instanceChars}`,
      };
    }
    return size;
  }

  private own(schema: JsonSchema, path: string, refDepth: number): { size: number; keyword: string } {
    const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
    if (type === 'object' || isSchema(schema.properties) || Array.isArray(schema.required)) {
      return this.object(schema, path, refDepth);
    }
    if (type === 'array' || 'items' in schema || 'prefixItems' in schema || 'minItems' in schema) {
      return this.array(schema, path, refDepth);
    }
    if (type === 'string' || 'minLength' in schema || 'pattern' in schema) {
      const minLength = count(schema.minLength);
      const pattern = typeof schema.pattern === 'string' ? patternLength(schema.pattern) : 0;
      return { size: 2 + Math.max(minLength, pattern, PLAIN), keyword: pattern > minLength ? 'pattern' : 'minLength' };
    }
    return { size: SCALAR, keyword: 'type' };
  }

  private object(schema: JsonSchema, path: string, refDepth: number): { size: number; keyword: string } {
    const properties = isSchema(schema.properties) ? schema.properties : {};
    let size = 2;
    let keys = 0;
    for (const [key, property] of Object.entries(properties)) {
      size = saturate(size + key.length + 4 + this.size(property, `${path}.properties.${key}`, refDepth));
      keys++;
    }
    const additional = schema.additionalProperties;
    const extra = additional === false ? 0 : this.size(isSchema(additional) ? additional : {}, path, refDepth);
    const required = list(schema.required).filter((k) => typeof k === 'string' && !(k in properties)).length;
    const missing = Math.max(0, count(schema.minProperties) - keys - required);
    const extras = additional === false ? 0 : saturate((required + missing) * (12 + extra));
    return { size: saturate(size + extras), keyword: missing > keys ? 'minProperties' : 'properties' };
  }

  private array(schema: JsonSchema, path: string, refDepth: number): { size: number; keyword: string } {
    const tuple = list(Array.isArray(schema.prefixItems) ? schema.prefixItems : schema.items);
    const rest = Array.isArray(schema.items) ? schema.additionalItems : schema.items;
    const maxItems = typeof schema.maxItems === 'number' ? schema.maxItems : Number.POSITIVE_INFINITY;
    const length = Math.min(maxItems, Math.max(count(schema.minItems), tuple.length, 1));
    let size = 2;
    tuple.slice(0, length).forEach((item, i) => {
      size = saturate(size + 1 + this.size(item, `${path}.prefixItems.${i}`, refDepth));
    });
    const others = Math.max(0, length - tuple.length);
    if (others > 0 && rest !== false) {
      size = saturate(size + others * (1 + this.size(rest ?? {}, `${path}.items`, refDepth)));
    }
    return { size, keyword: count(schema.minItems) > 1 ? 'minItems' : 'items' };
  }

  /** Local `$ref`s only, as the generator resolves them. */
  private resolve(schema: JsonSchema): JsonSchema {
    let current = schema;
    for (let hops = 0; typeof current.$ref === 'string' && current.$ref.startsWith('#') && hops < 8; hops++) {
      let target: unknown = this.root;
      for (const raw of current.$ref.slice(1).split('/').filter(Boolean)) {
        target = isSchema(target) ? target[raw.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined;
      }
      if (!isSchema(target)) break;
      const { $ref: _ref, ...siblings } = current;
      current = { ...target, ...siblings };
    }
    return current;
  }
}

const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const count = (value: unknown): number => (typeof value === 'number' && value > 0 ? Math.min(value, CAP) : 0);
const saturate = (value: number): number => Math.min(value, CAP);
const jsonLength = (value: unknown): number => JSON.stringify(value)?.length ?? 4;
const format = (n: number): string =>
  n >= CAP ? `more than ${CAP.toLocaleString('en-US')}` : Math.round(n).toLocaleString('en-US');

/**
 * The shortest match of a pattern RE2 accepted, roughly: the pattern's own length plus n per `{n…}`
 * (RE2 already capped each count, and their product through nesting, at 1000).
 */
function patternLength(pattern: string): number {
  let length = pattern.length;
  for (const match of pattern.matchAll(/\{(\d+)(?:,\d*)?\}/g)) length += Number(match[1]);
  return Math.min(length, CAP);
}
