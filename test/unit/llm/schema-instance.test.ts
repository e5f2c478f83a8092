import { Ajv } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../../src/domain/errors.js';
import type { JsonSchema } from '../../../src/domain/llm.js';
import { INSTANCE_BUDGET_CHARS, instanceOf } from '../../../src/llm/schema-instance.js';

/** Strict format checks, so the examples for each format are proven valid too. */
const FORMATS: Record<string, RegExp> = {
  'date-time': /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/,
  date: /^\d{4}-\d{2}-\d{2}$/,
  email: /^[^@\s]+@[^@\s]+\.[^@\s]+$/,
  uri: /^[a-z][a-z0-9+.-]*:\/\/\S+$/i,
  uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i,
};

function withFormats<T extends Ajv>(ajv: T): T {
  for (const [name, pattern] of Object.entries(FORMATS)) ajv.addFormat(name, pattern);
  return ajv;
}
const draft07 = withFormats(new Ajv({ strict: false, allErrors: true }));
const draft2020 = withFormats(new Ajv2020({ strict: false, allErrors: true }));

const quickStart = {
  type: 'object',
  required: ['bugs', 'severity'],
  properties: { bugs: { type: 'array', items: { type: 'string' } }, severity: { enum: ['low', 'medium', 'high'] } },
};

const schemas: Array<[string, JsonSchema]> = [
  ['docs/design.md#workflow-definitions quick start', quickStart],
  ['empty schema', {}],
  ['string', { type: 'string' }],
  ['number', { type: 'number' }],
  ['integer', { type: 'integer' }],
  ['boolean', { type: 'boolean' }],
  ['null', { type: 'null' }],
  ['type array', { type: ['null', 'integer'], minimum: 3 }],
  ['enum', { enum: [7, 'x'] }],
  ['const', { const: { fixed: true } }],
  ['default', { type: 'string', enum: ['a', 'b'], default: 'b' }],
  ['string lengths', { type: 'string', minLength: 25, maxLength: 30 }],
  ['short string', { type: 'string', maxLength: 3 }],
  ['pattern: ticket id', { type: 'string', pattern: '^[A-Z]{3}-\\d{4}$' }],
  ['pattern: alternation', { type: 'string', pattern: '^(yes|no)$' }],
  ['pattern: hex color', { type: 'string', pattern: '^#[0-9a-fA-F]{6}$' }],
  ['pattern: unanchored', { type: 'string', pattern: 'fix' }],
  ...Object.keys(FORMATS).map((format): [string, JsonSchema] => [`format ${format}`, { type: 'string', format }]),
  ['number range', { type: 'number', minimum: 10.5, maximum: 20 }],
  ['exclusive bounds (draft-06+)', { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1 }],
  ['integer exclusive minimum', { type: 'integer', exclusiveMinimum: 5 }],
  ['negative range', { type: 'integer', minimum: -10, maximum: -3 }],
  ['multipleOf with bounds', { type: 'integer', minimum: 7, multipleOf: 5 }],
  ['decimal multipleOf', { type: 'number', minimum: 0.25, multipleOf: 0.1 }],
  ['array lengths', { type: 'array', items: { type: 'integer' }, minItems: 3, maxItems: 4 }],
  ['unique items', { type: 'array', items: { type: 'string' }, minItems: 3, uniqueItems: true }],
  ['unique enum items', { type: 'array', items: { enum: ['a', 'b', 'c'] }, minItems: 2, uniqueItems: true }],
  [
    'tuple (draft-07 items array)',
    { type: 'array', items: [{ type: 'string' }, { type: 'number' }], additionalItems: false },
  ],
  [
    'closed object with nested objects',
    {
      type: 'object',
      additionalProperties: false,
      required: ['summary', 'findings'],
      properties: {
        summary: { type: 'string', minLength: 1 },
        findings: {
          type: 'array',
          items: {
            type: 'object',
            required: ['line', 'issue'],
            properties: {
              line: { type: 'integer', minimum: 1 },
              issue: { type: 'string' },
              fixed: { type: 'boolean' },
            },
          },
        },
      },
    },
  ],
  ['required without properties', { type: 'object', required: ['a'], additionalProperties: { type: 'number' } }],
  ['minProperties', { type: 'object', minProperties: 2 }],
  ['anyOf', { anyOf: [{ type: 'string', minLength: 2 }, { type: 'number' }] }],
  ['oneOf', { oneOf: [{ type: 'integer', minimum: 1 }, { type: 'string' }] }],
  [
    'allOf merges objects',
    {
      allOf: [
        { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] },
        { properties: { b: { type: 'integer', minimum: 2 } }, required: ['b'] },
      ],
    },
  ],
  ['nullable (OpenAPI style)', { type: 'string', nullable: true, minLength: 1 }],
  [
    'shape-less keywords',
    { properties: { score: { minimum: 1, maximum: 5 }, tags: { items: { format: 'uuid' } } }, required: ['score'] },
  ],
  [
    'local $ref',
    {
      type: 'object',
      definitions: { severity: { enum: ['minor', 'major'] } },
      properties: { severity: { $ref: '#/definitions/severity' } },
      required: ['severity'],
    },
  ],
  [
    'review verdict (docs/design.md#complexity-allocation-selection-and-review)',
    {
      type: 'object',
      required: ['approved', 'concerns', 'severity'],
      properties: {
        approved: { type: 'boolean' },
        concerns: { type: 'array', items: { type: 'string' } },
        severity: { type: 'string', enum: ['none', 'minor', 'major', 'critical'] },
      },
    },
  ],
];

describe('instanceOf', () => {
  it('covers at least 20 schemas', () => {
    expect(schemas.length).toBeGreaterThanOrEqual(20);
  });

  it.each(schemas)('%s: the instance validates with ajv', (_name, schema) => {
    const instance = instanceOf(schema);
    const valid = draft07.validate(schema, instance);
    expect(valid, `${JSON.stringify(instance)}: ${draft07.errorsText(draft07.errors)}`).toBe(true);
  });

  it('supports draft 2020-12 prefixItems and $defs', () => {
    const schema = {
      type: 'object',
      $defs: { point: { type: 'array', prefixItems: [{ type: 'number' }, { type: 'number' }], items: false } },
      properties: { at: { $ref: '#/$defs/point' }, id: { type: 'string', format: 'uuid' } },
      required: ['at', 'id'],
    };
    const instance = instanceOf(schema);
    expect(draft2020.validate(schema, instance), draft2020.errorsText(draft2020.errors)).toBe(true);
  });

  it('is deterministic and readable', () => {
    expect(instanceOf(quickStart)).toEqual({ bugs: ['simulated'], severity: 'low' });
    expect(instanceOf(quickStart)).toEqual(instanceOf(structuredClone(quickStart)));
    expect(instanceOf({ type: 'string' })).toBe('simulated');
    expect(instanceOf({ type: 'string', default: 'given' })).toBe('given');
  });

  it('stops on self-referencing schemas', () => {
    const tree = { type: 'object', properties: { child: { $ref: '#' } } };
    expect(() => instanceOf(tree)).not.toThrow();
  });

  describe('hard size budget', () => {
    const bombs: Array<[string, JsonSchema]> = [
      [
        'nested minItems 3000³',
        {
          type: 'array',
          minItems: 3000,
          items: { type: 'array', minItems: 3000, items: { type: 'array', minItems: 3000 } },
        },
      ],
      ['minItems 30 000 000', { type: 'array', minItems: 30_000_000 }],
      ['minLength 50 000 000', { type: 'string', minLength: 50_000_000 }],
      ['minProperties 10 000 000', { type: 'object', minProperties: 10_000_000 }],
      [
        'a recursive $ref that doubles',
        { $defs: { n: { type: 'array', minItems: 2, items: { $ref: '#/$defs/n' } } }, $ref: '#/$defs/n' },
      ],
      ['a long pattern repetition', { type: 'string', pattern: '^a{50000000}$' }],
    ];
    it.each(bombs)('%s: a clear OUTPUT_TOO_LARGE error, never an exhausted heap', (_name, schema) => {
      let caught: unknown;
      try {
        // The sampler may give up on the pattern instead; then the plain string must still fit.
        const instance = instanceOf(schema);
        expect(JSON.stringify(instance).length).toBeLessThanOrEqual(INSTANCE_BUDGET_CHARS);
        return;
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(AppError);
      expect((caught as AppError).code).toBe('OUTPUT_TOO_LARGE');
    });

    it('an instance under the budget is unaffected', () => {
      const schema = { type: 'array', minItems: 1000, items: { type: 'string', minLength: 100 } };
      const instance = instanceOf(schema) as string[];
      expect(instance).toHaveLength(1000);
      expect(draft07.validate(schema, instance)).toBe(true);
    });

    it('a budget given explicitly is honoured', () => {
      expect(() => instanceOf({ type: 'string', minLength: 500 }, 100)).toThrow(/exceed 100 characters/);
    });
  });
});
