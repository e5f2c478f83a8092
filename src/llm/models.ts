import type { ModelPrice, ModelTiers } from '../config.js';
import { TIERS, type Tier } from '../domain/allocation.js';
import { AppError } from '../domain/errors.js';
import type { TokenUsage } from '../domain/llm.js';
import type { LlmProvider, ModelCatalog, ModelPriceInfo, ResolvedModel } from '../domain/ports.js';

/** Model specs, tiers and prices (docs/design.md#providers-and-models). */

/** The price class of a model, from its name. */
type ModelTier = Tier | 'other';

/** Providers baton knows how to talk to; whether each is configured is decided by `providers`. */
const KNOWN_PROVIDERS = ['sim', 'anthropic', 'openai'];

const SIM_TIERS: Record<Tier, string> = { haiku: 'sim/haiku', sonnet: 'sim/sonnet', opus: 'sim/opus' };
const ANTHROPIC_TIERS: Record<Tier, string> = {
  haiku: 'anthropic/claude-haiku-5-5',
  sonnet: 'anthropic/claude-sonnet-5-5',
  opus: 'anthropic/claude-opus-5-5',
};

const TIER_PRICES: Record<ModelTier, ModelPrice> = {
  haiku: { input: 1, output: 5 },
  sonnet: { input: 3, output: 15 },
  opus: { input: 15, output: 75 },
  other: { input: 0, output: 0 },
};
const CACHE_READ_FACTOR = 0.1;
const CACHE_WRITE_FACTOR = 1.25;

/** Specs come from client definitions, so the memo is bounded: past this size it starts over. */
const MAX_MEMO_ENTRIES = 10_000;

export interface ModelCatalogOptions {
  providers: Record<string, LlmProvider>;
  /** MODEL_TIERS, validated by config.ts. */
  tiers?: ModelTiers;
  /** MODEL_PRICES keyed by full model id, validated by config.ts. */
  prices?: Record<string, ModelPrice>;
  defaultModel: string;
  hasAnthropicKey: boolean;
}

export function tierOf(modelName: string): ModelTier {
  const lower = modelName.toLowerCase();
  for (const tier of TIERS) if (lower.includes(tier)) return tier;
  return 'other';
}

function isTier(spec: string): spec is Tier {
  return (TIERS as readonly string[]).includes(spec);
}

export function createModelCatalog(options: ModelCatalogOptions): ModelCatalog {
  const prices = options.prices ?? {};
  const tiers: Record<Tier, string> = { ...(options.hasAnthropicKey ? ANTHROPIC_TIERS : SIM_TIERS) };
  // Tiers the configuration leaves out keep their defaults.
  for (const tier of TIERS) tiers[tier] = options.tiers?.[tier] ?? tiers[tier];
  const knownProviders = new Set([...KNOWN_PROVIDERS, ...Object.keys(options.providers)]);
  // The shape is config.ts's; whether the provider exists is known only here.
  for (const [tier, id] of Object.entries(tiers)) {
    const provider = id.slice(0, id.indexOf('/'));
    if (!knownProviders.has(provider))
      throw new Error(`Invalid MODEL_TIERS: ${tier} uses unknown provider "${provider}"`);
  }

  const resolved = new Map<string, ResolvedModel>();
  const priceById = new Map<string, ModelPrice>();

  function resolveUncached(spec: string): ResolvedModel {
    const id = isTier(spec) ? tiers[spec] : spec;
    const slash = id.indexOf('/');
    const provider = slash > 0 ? id.slice(0, slash) : '';
    const providerModel = slash > 0 ? id.slice(slash + 1) : '';
    if (provider === '' || providerModel === '' || !knownProviders.has(provider)) {
      throw new AppError(
        'UNKNOWN_MODEL',
        `Unknown model "${spec}": use "haiku", "sonnet", "opus" or "<provider>/<model>" with provider ${[...knownProviders].join(', ')}`,
      );
    }
    const client = options.providers[provider];
    if (!client) {
      const hint =
        provider === 'anthropic' ? 'ANTHROPIC_API_KEY' : provider === 'openai' ? 'OPENAI_BASE_URL' : 'its settings';
      throw new AppError('PROVIDER_NOT_CONFIGURED', `Provider "${provider}" is not configured: set ${hint}`);
    }
    return { id, provider, providerModel, simulated: provider === 'sim', client };
  }

  function priceInfo(modelId: string): ModelPriceInfo {
    const price = priceOf(modelId);
    return {
      input: price.input,
      output: price.output,
      cacheRead: price.cacheRead ?? price.input * CACHE_READ_FACTOR,
      cacheWrite: price.cacheWrite ?? price.input * CACHE_WRITE_FACTOR,
    };
  }

  function priceOf(modelId: string): ModelPrice {
    let price = priceById.get(modelId);
    if (price === undefined) {
      const slash = modelId.indexOf('/');
      price = prices[modelId] ?? TIER_PRICES[tierOf(slash >= 0 ? modelId.slice(slash + 1) : modelId)];
      if (priceById.size >= MAX_MEMO_ENTRIES) priceById.clear();
      priceById.set(modelId, price);
    }
    return price;
  }

  const tierById = new Map<string, Tier>(TIERS.map((tier) => [tiers[tier], tier]));

  const catalog: ModelCatalog = {
    defaultModel: options.defaultModel,
    classOf(modelId) {
      const slash = modelId.indexOf('/');
      const provider = slash > 0 ? modelId.slice(0, slash) : '';
      return {
        provider: knownProviders.has(provider) ? provider : 'other',
        // The configured tier an id serves, else the tier its name says (as its price is found).
        tier: tierById.get(modelId) ?? tierOf(slash >= 0 ? modelId.slice(slash + 1) : modelId),
      };
    },
    resolve(spec) {
      let model = resolved.get(spec);
      if (model === undefined) {
        model = resolveUncached(spec);
        if (resolved.size >= MAX_MEMO_ENTRIES) resolved.clear();
        resolved.set(spec, model);
      }
      return model;
    },
    describe() {
      return {
        providers: [...knownProviders].sort().map((name) => ({
          name,
          configured: options.providers[name] !== undefined,
          simulated: name === 'sim',
        })),
        defaultModel: options.defaultModel,
        tiers: TIERS.map((tier) => ({ tier, model: tiers[tier], price: priceInfo(tiers[tier]) })),
        prices: Object.keys(prices)
          .sort()
          .map((model) => ({ model, price: priceInfo(model) })),
      };
    },
    costUsd(modelId, usage: TokenUsage) {
      const { cacheRead, cacheWrite, ...price } = priceInfo(modelId);
      const micro =
        usage.inputTokens * price.input +
        usage.outputTokens * price.output +
        (usage.cacheReadTokens ?? 0) * cacheRead +
        (usage.cacheWriteTokens ?? 0) * cacheWrite;
      return micro / 1_000_000;
    },
  };

  // A wrong DEFAULT_MODEL should stop the boot, not fail the first workflow.
  try {
    catalog.resolve(options.defaultModel);
  } catch (err) {
    throw new Error(`Invalid DEFAULT_MODEL "${options.defaultModel}": ${(err as Error).message}`);
  }
  return catalog;
}
