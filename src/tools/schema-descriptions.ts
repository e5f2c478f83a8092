/**
 * Where a tool's descriptions are: the tool's own `description` and every `description` of a
 * (sub)schema of its `input_schema` — properties, items, `$defs`, combinators and the other JSON
 * Schema keywords that hold schemas. Values that are data (`default`, `enum`, `const`, `examples`)
 * are not schemas, so a `description` key inside them is not a description.
 */

export interface DescriptionSite {
  /** Dotted path from the tool: `description`, `input_schema.properties.query.description`. */
  path: string;
  text: string;
}

/** Keywords whose value is an object of schemas keyed by name. */
const SCHEMA_MAPS = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas', 'dependencies'];
/** Keywords whose value is an array of schemas (`items` too, in its draft-04 tuple form). */
const SCHEMA_ARRAYS = ['allOf', 'anyOf', 'oneOf', 'prefixItems', 'items'];
/** Keywords whose value is one schema. */
const SCHEMA_SINGLES = [
  'items',
  'additionalItems',
  'additionalProperties',
  'unevaluatedItems',
  'unevaluatedProperties',
  'contains',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
];

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

interface Frame {
  schema: Json;
  path: string;
}

/** The schemas directly under one schema, in document order. */
function childrenOf({ schema, path }: Frame): Frame[] {
  const children: Frame[] = [];
  for (const key of Object.keys(schema)) {
    const value = schema[key];
    if (SCHEMA_MAPS.includes(key) && isObject(value)) {
      for (const name of Object.keys(value)) {
        const child = value[name];
        if (isObject(child)) children.push({ schema: child, path: `${path}.${key}.${name}` });
      }
    }
    if (SCHEMA_ARRAYS.includes(key) && Array.isArray(value)) {
      value.forEach((child, i) => {
        if (isObject(child)) children.push({ schema: child, path: `${path}.${key}.${i}` });
      });
    }
    if (SCHEMA_SINGLES.includes(key) && isObject(value)) children.push({ schema: value, path: `${path}.${key}` });
  }
  return children;
}

/**
 * Every non-blank description of a tool, the tool's own first, then its schema's depth-first in
 * document order. Iterative, and each object is visited once, so neither nesting nor a shared or
 * cyclic object (possible from code, never from JSON) can overflow the stack or loop.
 */
export function descriptionSites(tool: { description?: unknown; input_schema?: unknown }): DescriptionSite[] {
  const sites: DescriptionSite[] = [];
  const add = (path: string, text: unknown): void => {
    if (typeof text === 'string' && text.trim() !== '') sites.push({ path, text });
  };
  add('description', tool.description);
  if (!isObject(tool.input_schema)) return sites;
  const seen = new Set<object>();
  const stack: Frame[] = [{ schema: tool.input_schema, path: 'input_schema' }];
  for (let frame = stack.pop(); frame !== undefined; frame = stack.pop()) {
    if (seen.has(frame.schema)) continue;
    seen.add(frame.schema);
    add(`${frame.path}.description`, frame.schema.description);
    stack.push(...childrenOf(frame).reverse());
  }
  return sites;
}
