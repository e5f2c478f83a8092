import { describe, expect, it } from 'vitest';
import { databaseLabel, headersTimeoutMs, loadConfig } from '../../src/config.js';
import { ModelSpecSchema } from '../../src/domain/names.js';

describe('HEADERS_TIMEOUT_MS', () => {
  it('defaults to 20 s, or REQUEST_TIMEOUT_MS when that is shorter', () => {
    expect(headersTimeoutMs(loadConfig({}))).toBe(20_000);
    expect(headersTimeoutMs(loadConfig({ REQUEST_TIMEOUT_MS: '5000' }))).toBe(5_000);
  });

  it('takes the configured value', () => {
    expect(headersTimeoutMs(loadConfig({ HEADERS_TIMEOUT_MS: '1000' }))).toBe(1_000);
  });

  it('is refused above REQUEST_TIMEOUT_MS, below 500 ms or when not an integer', () => {
    expect(() => loadConfig({ HEADERS_TIMEOUT_MS: '40000' })).toThrow(/HEADERS_TIMEOUT_MS/);
    expect(() => loadConfig({ HEADERS_TIMEOUT_MS: '100' })).toThrow(/HEADERS_TIMEOUT_MS/);
    expect(() => loadConfig({ HEADERS_TIMEOUT_MS: 'soon' })).toThrow(/HEADERS_TIMEOUT_MS/);
  });
});

describe('MODEL_TIERS', () => {
  it('takes provider/model specs for haiku, sonnet and opus', () => {
    const config = loadConfig({ MODEL_TIERS: '{"haiku":"openai/qwen2.5:7b","opus":"anthropic/claude-opus-4-1"}' });
    expect(config.MODEL_TIERS).toEqual({ haiku: 'openai/qwen2.5:7b', opus: 'anthropic/claude-opus-4-1' });
    expect(loadConfig({}).MODEL_TIERS).toBeUndefined();
  });

  it.each([
    ['an unknown tier', '{"turbo":"sim/x"}', /MODEL_TIERS: .*"turbo"/],
    ['a spec without a provider', '{"sonnet":"no-slash"}', /MODEL_TIERS\.sonnet: /],
    ['a tier name as the spec', '{"sonnet":"opus"}', /MODEL_TIERS\.sonnet: /],
    ['a number', '{"opus":42}', /MODEL_TIERS\.opus: /],
    ['an array', '["sim/x"]', /MODEL_TIERS: must be a JSON object/],
    ['no JSON', '{haiku: sim/x}', /MODEL_TIERS: must be a JSON object/],
  ])('refuses %s at boot, naming the variable and the key', (_, value, message) => {
    expect(() => loadConfig({ MODEL_TIERS: value })).toThrow(message);
  });

  // config.ts may not import domain/ (same floor), so it keeps its own copy of the pattern.
  it('accepts exactly the provider/model specs a workflow definition accepts', () => {
    const specs = ['sim/sonnet', 'openai/qwen2.5:7b', 'openai/org/model', 'Sim/x', 'sim/', '/x', 'sim/a b', 'a_b/c'];
    for (const spec of [...specs, `sim/${'x'.repeat(196)}`, `sim/${'x'.repeat(197)}`]) {
      const tiers = () => loadConfig({ MODEL_TIERS: JSON.stringify({ haiku: spec }) });
      const accepted = ModelSpecSchema.safeParse(spec).success;
      if (accepted) expect(tiers, spec).not.toThrow();
      else expect(tiers, spec).toThrow(/MODEL_TIERS\.haiku/);
    }
  });
});

describe('MODEL_PRICES', () => {
  it('takes USD per million tokens keyed by provider/model', () => {
    const config = loadConfig({
      MODEL_PRICES: '{"openai/qwen2.5":{"input":0,"output":0},"sim/x":{"input":1.5,"output":3,"cacheRead":0.1}}',
    });
    expect(config.MODEL_PRICES).toEqual({
      'openai/qwen2.5': { input: 0, output: 0 },
      'sim/x': { input: 1.5, output: 3, cacheRead: 0.1 },
    });
  });

  it.each([
    ['a key that is no provider/model', '{"qwen":{"input":0,"output":0}}', /MODEL_PRICES\.qwen: /],
    ['a negative price', '{"openai/qwen":{"input":-1,"output":0}}', /MODEL_PRICES\.openai\/qwen\.input: /],
    ['an infinite price', '{"openai/qwen":{"input":1e999,"output":0}}', /MODEL_PRICES\.openai\/qwen\.input: /],
    ['a missing price', '{"openai/qwen":{"input":1}}', /MODEL_PRICES\.openai\/qwen\.output: /],
    ['an unknown field', '{"openai/qwen":{"input":1,"output":1,"per":"token"}}', /MODEL_PRICES\.openai\/qwen: .*"per"/],
    ['a price as a string', '{"openai/qwen":{"input":"1","output":1}}', /MODEL_PRICES\.openai\/qwen\.input: /],
    ['no JSON object', '42', /MODEL_PRICES: must be a JSON object/],
  ])('refuses %s at boot, naming the variable and the key', (_, value, message) => {
    expect(() => loadConfig({ MODEL_PRICES: value })).toThrow(message);
  });
});

describe('DATABASE_URL', () => {
  it('takes a postgres:// or postgresql:// URL, and refuses anything else naming the variable', () => {
    expect(loadConfig({ DATABASE_URL: 'postgres://u:p@db:5432/baton' }).DATABASE_URL).toBe(
      'postgres://u:p@db:5432/baton',
    );
    expect(loadConfig({ DATABASE_URL: 'postgresql://db/baton' }).DATABASE_URL).toBe('postgresql://db/baton');
    expect(loadConfig({}).DATABASE_URL).toBeUndefined();
    for (const bad of ['mysql://db/baton', './data/baton.db', 'postgres://', 'postgres://db /x']) {
      expect(() => loadConfig({ DATABASE_URL: bad })).toThrow(/DATABASE_URL/);
    }
  });

  it('is logged without its password or query', () => {
    const config = loadConfig({ DATABASE_URL: 'postgres://baton:s3cret@db:5432/baton?sslpassword=x' });
    expect(databaseLabel(config)).toBe('postgres://baton@db:5432/baton');
    expect(databaseLabel(loadConfig({ DATABASE_PATH: '/var/lib/baton.db' }))).toBe('/var/lib/baton.db');
  });
});
