import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../support/build-app.js';
import { createSchemaValidator, type JsonSchema, schemaArbitrary, subschemaAt } from '../support/schema-arbitrary.js';

/**
 * The route fuzz starts from values the routes' own JSON Schemas accept: if the generator drifted
 * from the schemas (a keyword it ignores, a pattern it cannot honour), the "valid" requests would
 * be invalid and the fuzz would never get past validation. Every request body and parameter schema
 * of the served OpenAPI document, sampled and checked with ajv.
 */
let t: TestApp;
let document: { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, JsonSchema> } };
let accepts: (schema: JsonSchema) => (value: unknown) => boolean;
const resolve = (ref: string): JsonSchema => {
  const schema = document.components.schemas[ref.replace('#/components/schemas/', '')];
  if (!schema) throw new Error(`unknown ${ref}`);
  return schema;
};

interface Operation {
  parameters?: Array<{ name: string; in: string; schema?: JsonSchema }>;
  requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
}

beforeAll(async () => {
  t = await buildTestApp();
  document = t.app.swagger() as unknown as typeof document;
  accepts = createSchemaValidator(document.components);
});
afterAll(() => t.close());

function schemasOfTheDocument(): Array<[string, JsonSchema]> {
  const out: Array<[string, JsonSchema]> = [];
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const body = operation.requestBody?.content?.['application/json']?.schema;
      if (body) out.push([`${method.toUpperCase()} ${path} body`, body]);
      for (const p of operation.parameters ?? []) {
        if (p.schema) out.push([`${method.toUpperCase()} ${path} ${p.in} ${p.name}`, p.schema]);
      }
    }
  }
  return out;
}

describe('schemaArbitrary', () => {
  it('generates only values the schema accepts, for every body and parameter of the document', () => {
    const schemas = schemasOfTheDocument();
    expect(schemas.length).toBeGreaterThan(50);
    for (const [where, schema] of schemas) {
      const validate = accepts(schema);
      const samples = fc.sample(schemaArbitrary(schema, { resolve, words: ['__proto__', 'constructor'] }), {
        numRuns: 150,
        seed: 11,
      });
      const rejected = samples.filter((value) => !validate(value));
      expect(rejected.slice(0, 1), `${where}: generated values its schema rejects`).toEqual([]);
    }
  });

  it('honours each keyword (a check of the checker: values outside the keywords are rejected)', () => {
    const cases: Array<[JsonSchema, unknown]> = [
      [{ type: 'string', maxLength: 3 }, 'abcd'],
      [{ type: 'string', pattern: '^a+$' }, 'b'],
      [{ type: 'integer', minimum: 1, maximum: 2 }, 3],
      [{ type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false }, {}],
      [{ type: 'array', items: { type: 'boolean' }, minItems: 1 }, []],
      [{ enum: ['x', 'y'] }, 'z'],
      [{ const: 1 }, 2],
      [{ anyOf: [{ type: 'string' }, { type: 'null' }] }, 1],
    ];
    for (const [schema, outside] of cases) {
      expect(accepts(schema)(outside), JSON.stringify(schema)).toBe(false);
      const samples = fc.sample(schemaArbitrary(schema), { numRuns: 100, seed: 5 });
      expect(samples.every(accepts(schema)), JSON.stringify(schema)).toBe(true);
    }
  });

  it('finds the schema of a field inside a record, through $ref, oneOf and items', () => {
    const definition = resolve('#/components/schemas/WorkflowDefinition');
    const value = { name: 'x', root: { type: 'sequence', name: 's', steps: [{ type: 'prompt', name: 'p' }] } };
    const sub = subschemaAt(definition, ['root', 'steps', 0, 'name'], value, resolve, accepts);
    expect(sub).toMatchObject({ type: 'string', maxLength: 100 });
    const steps = subschemaAt(definition, ['root', 'steps'], value, resolve, accepts);
    expect(steps.type).toBe('array');
  });
});
