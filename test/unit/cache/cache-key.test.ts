import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cacheKey, type EffectiveRequest, effectiveRequest, schemaHash } from '../../../src/cache/cache-key.js';
import { canonicalJson } from '../../../src/domain/canonical-json.js';
import type { LlmRequest, ToolDefinition } from '../../../src/domain/llm.js';

function define(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

const HEX_KEY = /^analyst:[0-9a-f]{64}$/;

const toolArb: fc.Arbitrary<ToolDefinition> = fc.record({
  name: fc.stringMatching(/^[a-z_]{1,12}$/),
  description: fc.string({ maxLength: 40 }),
  input_schema: fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }),
});

const messageArb = fc.record({
  role: fc.constantFrom('user' as const, 'assistant' as const),
  content: fc.oneof(
    fc.string({ maxLength: 60 }),
    fc.array(fc.record({ type: fc.constant('text' as const), text: fc.string({ maxLength: 30 }) }), {
      minLength: 1,
      maxLength: 3,
    }),
  ),
});

const requestArb: fc.Arbitrary<EffectiveRequest> = fc.record({
  tenant: fc.string({ minLength: 1, maxLength: 10 }),
  provider: fc.constantFrom('anthropic', 'openai', 'sim'),
  model: fc.string({ minLength: 1, maxLength: 20 }),
  system: fc.option(fc.string({ maxLength: 80 }), { nil: undefined }),
  messages: fc.array(messageArb, { minLength: 1, maxLength: 4 }),
  temperature: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: undefined }),
  maxTokens: fc.integer({ min: 1, max: 8192 }),
  stop: fc.option(fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }), { nil: undefined }),
  tools: fc.option(fc.uniqueArray(toolArb, { selector: (t) => t.name, maxLength: 4 }), { nil: undefined }),
  schemaHash: fc.oneof(fc.constant('no-schema'), fc.stringMatching(/^[0-9a-f]{64}$/)),
});

/** The same data with every object's keys inserted in reverse order. */
function reversedKeys<T>(value: T): T {
  if (Array.isArray(value)) return value.map(reversedKeys) as T;
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  // defineProperty, not assignment: a `__proto__` key must stay an own member.
  for (const k of Object.keys(value).reverse()) define(out, k, reversedKeys((value as Record<string, unknown>)[k]));
  return out as T;
}

type Field = keyof EffectiveRequest;

/** A different value for one field, guaranteed to differ from the current one. */
function changed(request: EffectiveRequest, field: Field, salt: string): EffectiveRequest {
  const next = { ...request };
  switch (field) {
    case 'tenant':
    case 'provider':
    case 'model':
    case 'schemaHash':
      next[field] = `${request[field]}${salt}`;
      break;
    case 'system':
      next.system = request.system === undefined ? salt : `${request.system}${salt}`;
      break;
    case 'messages':
      next.messages = [...request.messages, { role: 'user', content: salt }];
      break;
    case 'temperature':
      next.temperature = request.temperature === undefined ? 0.5 : request.temperature + 1;
      break;
    case 'maxTokens':
      next.maxTokens = request.maxTokens + 1;
      break;
    case 'stop':
      next.stop = [...(request.stop ?? []), salt];
      break;
    case 'tools': {
      const extra: ToolDefinition = { name: `zz_${salt}`, description: 'extra', input_schema: {} };
      next.tools = [...(request.tools ?? []), extra];
      break;
    }
  }
  return next;
}

const FIELDS: Field[] = [
  'tenant',
  'provider',
  'model',
  'system',
  'messages',
  'temperature',
  'maxTokens',
  'stop',
  'tools',
  'schemaHash',
];

describe('cacheKey', () => {
  it('is `<namespace>:<sha256 hex>`', () => {
    fc.assert(fc.property(requestArb, (request) => HEX_KEY.test(cacheKey('analyst', request))));
  });

  it('does not depend on key order anywhere in the request', () => {
    fc.assert(
      fc.property(requestArb, (request) => {
        expect(cacheKey('analyst', reversedKeys(request))).toBe(cacheKey('analyst', request));
      }),
      { numRuns: 200 },
    );
  });

  it('does not depend on the order of tool definitions (sorted by name)', () => {
    fc.assert(
      fc.property(requestArb, (request) => {
        const tools = request.tools?.slice().reverse();
        expect(cacheKey('analyst', { ...request, tools })).toBe(cacheKey('analyst', request));
      }),
    );
  });

  it('changes when any effective field changes', () => {
    fc.assert(
      fc.property(
        requestArb,
        fc.constantFrom(...FIELDS),
        fc.string({ minLength: 1, maxLength: 4 }),
        (request, field, salt) => {
          expect(cacheKey('analyst', changed(request, field, salt))).not.toBe(cacheKey('analyst', request));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('changes when a tool definition changes anything but its name', () => {
    const tool: ToolDefinition = {
      name: 'search',
      description: 'Search the corpus.',
      input_schema: { type: 'object' },
    };
    const base: EffectiveRequest = {
      tenant: 't',
      provider: 'sim',
      model: 'sonnet',
      messages: [{ role: 'user', content: 'hi' }],
      maxTokens: 100,
      tools: [tool],
      schemaHash: 'no-schema',
    };
    const keys = new Set([
      cacheKey('a', base),
      cacheKey('a', { ...base, tools: [{ ...tool, description: 'Search the corpus!' }] }),
      cacheKey('a', { ...base, tools: [{ ...tool, input_schema: { type: 'object', required: [] } }] }),
    ]);
    expect(keys.size).toBe(3);
  });

  it('differs between namespaces for the same request', () => {
    fc.assert(
      fc.property(requestArb, (request) => {
        expect(cacheKey('analyst', request)).not.toBe(cacheKey('analyst2', request));
      }),
      { numRuns: 50 },
    );
  });
});

describe('schemaHash', () => {
  const schema = {
    type: 'object',
    properties: {
      title: { type: 'string', minLength: 1 },
      verdict: { type: 'string', enum: ['approve', 'reject', 'comment'] },
    },
    required: ['title', 'verdict'],
  };

  it('is "no-schema" without a schema and SHA-256 hex otherwise', () => {
    expect(schemaHash(undefined)).toBe('no-schema');
    expect(schemaHash(schema)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('ignores key order', () => {
    expect(schemaHash(reversedKeys(schema))).toBe(schemaHash(schema));
  });

  it('separates schemas that differ only in a minLength or in one enum value', () => {
    const minLength2 = structuredClone(schema);
    minLength2.properties.title.minLength = 2;
    const otherEnum = structuredClone(schema);
    otherEnum.properties.verdict.enum = ['approve', 'reject', 'abstain'];
    const hashes = new Set([schemaHash(schema), schemaHash(minLength2), schemaHash(otherEnum)]);
    expect(hashes.size).toBe(3);

    const key = (responseFormat: Record<string, unknown>) =>
      cacheKey('analyst', {
        tenant: 't',
        provider: 'sim',
        model: 'sonnet',
        messages: [{ role: 'user', content: 'review' }],
        maxTokens: 100,
        schemaHash: schemaHash(responseFormat),
      });
    expect(key(minLength2)).not.toBe(key(schema));
    expect(key(otherEnum)).not.toBe(key(schema));
  });

  it('separates any two different JSON documents', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (a, b) => {
        fc.pre(JSON.stringify(a) !== JSON.stringify(b));
        const objA = { s: a };
        const objB = { s: b };
        // Different documents can still be equal up to key order; only those may share a hash.
        const sameUpToOrder = canonicalJson(objA) === canonicalJson(objB);
        if (!sameUpToOrder) expect(schemaHash(objA)).not.toBe(schemaHash(objB));
      }),
      { numRuns: 200 },
    );
  });
});

describe('effectiveRequest', () => {
  const request: LlmRequest = {
    model: 'claude-sonnet-4-5',
    system: 'You review code.',
    messages: [{ role: 'user', content: 'Review this.' }],
    maxTokens: 1024,
    temperature: 0.2,
    stop: ['END'],
    responseFormat: { type: 'object' },
    simulate: { responses: [{ text: 'x' }], scriptKey: 'wf_1/nd_1' },
  };

  it('keys the request exactly as sent, call-time overrides included', () => {
    const base = cacheKey('reviewer', effectiveRequest('acme', 'anthropic', request));
    const overridden = [
      { ...request, model: 'claude-haiku-4-5' },
      { ...request, temperature: 0.9 },
      { ...request, maxTokens: 2048 },
      { ...request, system: 'You review code strictly.' },
      { ...request, responseFormat: { type: 'object', required: ['x'] } },
    ].map((r) => cacheKey('reviewer', effectiveRequest('acme', 'anthropic', r)));
    expect(new Set([base, ...overridden]).size).toBe(6);
    expect(cacheKey('reviewer', effectiveRequest('globex', 'anthropic', request))).not.toBe(base);
  });

  it('leaves out the sim script (simulate), which is not part of the question', () => {
    const other = { ...request, simulate: { responses: [{ text: 'x' }], scriptKey: 'wf_2/nd_9' } };
    expect(cacheKey('r', effectiveRequest('acme', 'sim', other))).toBe(
      cacheKey('r', effectiveRequest('acme', 'sim', request)),
    );
  });

  it('keeps the sim script itself in the key: another script or latency is another question', () => {
    const key = (simulate: LlmRequest['simulate']) => {
      const r: LlmRequest = { ...request };
      if (simulate === undefined) delete r.simulate;
      else r.simulate = simulate;
      return cacheKey('r', effectiveRequest('acme', 'sim', r));
    };
    const keys = [
      key(request.simulate),
      key({ responses: [{ text: 'y' }], scriptKey: 'wf_1/nd_1' }),
      key({ responses: [{ text: 'x' }], latencyMs: 10, scriptKey: 'wf_1/nd_1' }),
      key(undefined),
    ];
    expect(new Set(keys).size).toBe(4);
  });

  it("keys the tools as sent, in any order, and leaves the caller's array as it was", () => {
    const tool = (name: string): ToolDefinition => ({ name, description: `${name} tool`, input_schema: {} });
    const tools = [tool('zeta'), tool('alpha'), tool('mid')];
    const withTools = cacheKey('r', effectiveRequest('acme', 'sim', { ...request, tools }));
    expect(tools.map((t) => t.name)).toEqual(['zeta', 'alpha', 'mid']);
    const sorted = [tool('alpha'), tool('mid'), tool('zeta')];
    expect(cacheKey('r', effectiveRequest('acme', 'sim', { ...request, tools: sorted }))).toBe(withTools);
    expect(cacheKey('r', effectiveRequest('acme', 'sim', request))).not.toBe(withTools);
    expect(cacheKey('r', effectiveRequest('acme', 'sim', { ...request, tools: [tool('alpha')] }))).not.toBe(withTools);
  });
});
