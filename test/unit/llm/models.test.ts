import { describe, expect, it } from 'vitest';
import { AppError } from '../../../src/domain/errors.js';
import type { LlmProvider } from '../../../src/domain/ports.js';
import { systemClock } from '../../../src/inproc/clock.js';
import { createModelCatalog, type ModelCatalogOptions } from '../../../src/llm/models.js';
import { createSimulatedProvider } from '../../../src/llm/simulated.js';

const sim = createSimulatedProvider({ clock: systemClock });
// Stand-ins for configured real providers: the catalog only hands them out, it never calls them.
const anthropic: LlmProvider = createSimulatedProvider({ clock: systemClock });
const openai: LlmProvider = createSimulatedProvider({ clock: systemClock });

function catalog(overrides: Partial<ModelCatalogOptions> = {}) {
  return createModelCatalog({ providers: { sim }, defaultModel: 'sonnet', hasAnthropicKey: false, ...overrides });
}

function appError(fn: () => unknown): AppError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    return err as AppError;
  }
  throw new Error('expected an AppError');
}

describe('model catalog: resolve', () => {
  it('maps tiers to sim models when no Anthropic key is configured', () => {
    const models = catalog();
    expect(models.resolve('sonnet')).toMatchObject({
      id: 'sim/sonnet',
      provider: 'sim',
      providerModel: 'sonnet',
      simulated: true,
    });
    expect(models.resolve('haiku').id).toBe('sim/haiku');
    expect(models.resolve('opus').client).toBe(sim);
    expect(models.defaultModel).toBe('sonnet');
  });

  it('maps tiers to Anthropic models when the key is configured', () => {
    const models = catalog({ providers: { sim, anthropic }, hasAnthropicKey: true });
    expect(models.resolve('haiku')).toMatchObject({
      id: 'anthropic/claude-haiku-5-5',
      simulated: false,
    });
    expect(models.resolve('sonnet').id).toBe('anthropic/claude-sonnet-5-5');
    expect(models.resolve('opus').id).toBe('anthropic/claude-opus-5-5');
    expect(models.resolve('opus').client).toBe(anthropic);
  });

  it('MODEL_TIERS overrides some tiers and keeps the defaults for the others', () => {
    const models = catalog({ providers: { sim, openai }, tiers: { haiku: 'openai/qwen2.5:7b' } });
    expect(models.resolve('haiku')).toMatchObject({
      id: 'openai/qwen2.5:7b',
      provider: 'openai',
      providerModel: 'qwen2.5:7b',
      client: openai,
    });
    expect(models.resolve('opus').id).toBe('sim/opus');
  });

  it('splits provider/model on the first slash', () => {
    const models = catalog({ providers: { sim, openai } });
    expect(models.resolve('openai/org/model-haiku')).toMatchObject({
      provider: 'openai',
      providerModel: 'org/model-haiku',
    });
    expect(models.resolve('sim/anything')).toMatchObject({ providerModel: 'anything', simulated: true });
  });

  it('unknown providers and malformed specs → UNKNOWN_MODEL (400)', () => {
    const models = catalog();
    for (const spec of ['gemini/pro', 'gpt-4', 'sim/', '/sonnet', '']) {
      const err = appError(() => models.resolve(spec));
      expect(err.code).toBe('UNKNOWN_MODEL');
      expect(err.statusCode).toBe(400);
    }
  });

  it('known but unconfigured providers → PROVIDER_NOT_CONFIGURED (400) naming the setting', () => {
    const models = catalog();
    const noKey = appError(() => models.resolve('anthropic/claude-haiku-4-5'));
    expect(noKey.code).toBe('PROVIDER_NOT_CONFIGURED');
    expect(noKey.statusCode).toBe(400);
    expect(noKey.message).toContain('ANTHROPIC_API_KEY');
    expect(appError(() => models.resolve('openai/qwen2.5')).message).toContain('OPENAI_BASE_URL');
  });

  it('memoises resolutions', () => {
    const models = catalog();
    expect(models.resolve('sim/sonnet')).toBe(models.resolve('sim/sonnet'));
    expect(models.resolve('haiku')).toBe(models.resolve('haiku'));
  });
});

describe('model catalog: boot validation', () => {
  // The shape of MODEL_TIERS and MODEL_PRICES is checked by loadConfig (test/unit/config.test.ts).
  it('rejects MODEL_TIERS naming a provider baton does not know', () => {
    expect(() => catalog({ tiers: { opus: 'mystery/x' } })).toThrow(
      /Invalid MODEL_TIERS: opus uses unknown provider "mystery"/,
    );
  });

  it('rejects a DEFAULT_MODEL that does not resolve', () => {
    expect(() => catalog({ defaultModel: 'anthropic/claude-haiku-4-5' })).toThrow(/DEFAULT_MODEL.*not configured/);
    expect(() => catalog({ defaultModel: 'turbo' })).toThrow(/DEFAULT_MODEL/);
  });
});

describe('model catalog: costUsd', () => {
  const million = { inputTokens: 1_000_000, outputTokens: 1_000_000 };

  it('prices by tier in USD per million tokens, sim models as their tier', () => {
    const models = catalog({ providers: { sim, anthropic } });
    expect(models.costUsd('sim/haiku', million)).toBe(6);
    expect(models.costUsd('anthropic/claude-sonnet-4-5', million)).toBe(18);
    expect(models.costUsd('sim/opus', million)).toBe(90);
    expect(models.costUsd('sim/other', million)).toBe(0);
    // The tier is read from the model's name, after the provider.
    expect(models.costUsd('openai/org/model-haiku', million)).toBe(6);
    expect(models.costUsd('sim/claude-opus-x', million)).toBe(90);
    expect(models.costUsd('sim/sonnet', { inputTokens: 1000, outputTokens: 500 })).toBeCloseTo(0.0105, 10);
  });

  it('charges cache reads at 0.1× and cache writes at 1.25× the input price', () => {
    const models = catalog();
    const usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 1_000_000, cacheWriteTokens: 1_000_000 };
    expect(models.costUsd('sim/sonnet', usage)).toBeCloseTo(3 * 0.1 + 3 * 1.25, 10);
  });

  it('MODEL_PRICES overrides by full model id', () => {
    const models = catalog({
      providers: { sim, openai },
      prices: { 'openai/qwen2.5': { input: 0.5, output: 1 }, 'sim/sonnet': { input: 0, output: 0 } },
    });
    expect(models.costUsd('openai/qwen2.5', million)).toBe(1.5);
    expect(models.costUsd('sim/sonnet', million)).toBe(0);
    expect(models.costUsd('sim/haiku', million)).toBe(6);
  });
});
