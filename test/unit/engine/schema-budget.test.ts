import { describe, expect, it } from 'vitest';
import { checkSchemaBudget, SCHEMA_BUDGET } from '../../../src/engine/nodes/prompt/schema-budget.js';

const check = (schema: Record<string, unknown>) => checkSchemaBudget(schema, 'rf');

function objectWith(properties: number, make: (i: number) => unknown = () => ({ type: 'integer' })) {
  const shape: Record<string, unknown> = {};
  for (let i = 0; i < properties; i++) shape[`p${i}`] = make(i);
  return { type: 'object', properties: shape };
}

describe('checkSchemaBudget', () => {
  it('accepts everyday schemas', () => {
    expect(
      check({ type: 'object', required: ['a'], properties: { a: { type: 'array', items: { type: 'string' } } } }),
    ).toEqual([]);
    expect(check({ type: 'string', pattern: '^[A-Z]{2}-\\d{3}$', minLength: 6 })).toEqual([]);
  });

  it(`subschemas: ${SCHEMA_BUDGET.subschemas} pass, one more is named`, () => {
    expect(check(objectWith(SCHEMA_BUDGET.subschemas - 1))).toEqual([]);
    const issues = check(objectWith(SCHEMA_BUDGET.subschemas));
    expect(issues).toHaveLength(1);
    expect(issues[0]?.path).toBe(`rf.properties.p${SCHEMA_BUDGET.subschemas - 1}`);
  });

  it(`patterns: ${SCHEMA_BUDGET.patterns} pass, one more is named`, () => {
    const patterned = (n: number) => objectWith(n, () => ({ type: 'string', pattern: 'a' }));
    expect(check(patterned(SCHEMA_BUDGET.patterns))).toEqual([]);
    expect(check(patterned(SCHEMA_BUDGET.patterns + 1))[0]?.message).toContain('one pattern too many');
  });

  it('bytes and depth', () => {
    expect(check({ description: 'x'.repeat(SCHEMA_BUDGET.bytes) })[0]?.message).toContain('bytes of JSON Schema');
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i <= SCHEMA_BUDGET.depth; i++) deep = { type: 'array', items: deep };
    expect(check(deep)[0]?.message).toContain('nested deeper than');
  });

  it('patterns run on RE2: lookarounds, backreferences and huge counts are refused with its reason', () => {
    expect(check({ type: 'string', pattern: '(?=a)' })[0]).toMatchObject({ path: 'rf.pattern' });
    expect(check({ type: 'string', pattern: '(a)\\1' })[0]?.message).toContain('invalid escape');
    expect(check({ type: 'string', pattern: 'a{1001}' })[0]?.message).toContain('invalid repeat count');
    expect(check({ patternProperties: { '(?<=x)': {} } })[0]?.path).toBe('rf.patternProperties');
  });

  it('the simulated instance: products through nesting are estimated and the keyword named', () => {
    const cube = {
      type: 'array',
      minItems: 3000,
      items: { type: 'array', minItems: 3000, items: { type: 'array', minItems: 3000 } },
    };
    expect(check(cube)[0]?.path).toBe('rf.items.minItems');
    expect(check({ type: 'array', minItems: 100, items: { type: 'array', minItems: 100 } })).toEqual([]);
    expect(check({ type: 'string', minLength: SCHEMA_BUDGET.instanceChars })[0]?.path).toBe('rf.minLength');
    expect(check({ type: 'object', minProperties: 1e7 })[0]?.path).toBe('rf.minProperties');
    const recursive = { $defs: { n: { type: 'array', minItems: 2, items: { $ref: '#/$defs/n' } } }, $ref: '#/$defs/n' };
    expect(check(recursive)[0]?.message).toContain('through nesting');
  });
});
