import { z } from 'zod';
import type { LlmRequest, LlmResponse } from './llm.js';

/**
 * The response cache (docs/design.md#caching): types and the two ports. The engine sees only `ResponseCache`;
 * `CacheStore` is the persistent tier behind it (SQLite today, PostgreSQL when scaled out).
 */

const TextBlockSchema = z.object({ type: z.literal('text'), text: z.string() });
const ToolUseBlockSchema = z.object({
  type: z.literal('tool_use'),
  id: z.string(),
  name: z.string(),
  input: z.record(z.string(), z.unknown()),
});

/** Read-back guard for persisted values: a row written by an older build must not crash a run. */
export const LlmResponseSchema = z.object({
  content: z.array(z.discriminatedUnion('type', [TextBlockSchema, ToolUseBlockSchema])).min(1),
  stopReason: z.enum(['end_turn', 'tool_use', 'max_tokens', 'stop_sequence']),
  usage: z.object({
    inputTokens: z.number().nonnegative(),
    outputTokens: z.number().nonnegative(),
    cacheReadTokens: z.number().nonnegative().optional(),
    cacheWriteTokens: z.number().nonnegative().optional(),
  }),
  model: z.string(),
  requestId: z.string().nullable(),
  simulated: z.boolean().optional(),
}) satisfies z.ZodType<LlmResponse>;

export const CachedResponseSchema = z.object({
  response: LlmResponseSchema,
  /** `provider/model` that produced it, as recorded in metrics. */
  modelId: z.string(),
  /** What the original call cost: the saving each hit reports. */
  costUsd: z.number().nonnegative(),
  createdAt: z.number(),
});
export interface CachedResponse {
  response: LlmResponse;
  modelId: string;
  costUsd: number;
  /** Epoch ms of the provider call that produced it. */
  createdAt: number;
}

export interface CacheEntryInfo {
  key: string;
  tenantId: string;
  /** The agent name: the part of the key before its last `:`. */
  namespace: string;
  /** UTF-8 bytes of the JSON of the CachedResponse (what the memory tier counts against maxBytes). */
  sizeBytes: number;
  createdAt: number;
  /** Epoch ms; sliding: every hit moves it to `hit time + ttl`. */
  expiresAt: number;
  hits: number;
  lastHitAt: number | null;
  modelId: string;
  tokens: { input: number; output: number };
}

/** An entry as the persistent tier stores it. */
export interface CacheEntry extends CacheEntryInfo {
  value: CachedResponse;
}

export interface CacheStats {
  hits: number;
  misses: number;
  /** hits / (hits + misses), 0 when nothing was looked up. */
  hitRate: number;
  /** Entries of the tenant in the memory tier. */
  size: number;
  sizeBytes: number;
  /** Input + output tokens of every response served from the cache. */
  tokensSaved: number;
  /** US dollars the hits did not spend on real providers. */
  costSavedUsd: number;
  /** What hits of sim/* answers would have cost at their tier price: not money, kept apart. */
  simulatedCostSavedUsd: number;
}

/** Every method is tenant-scoped: one tenant never reads, counts or busts another's entries. */
export interface ResponseCache {
  /** `<namespace>:<sha256>` over the effective provider request (docs/design.md#caching). */
  keyFor(namespace: string, tenantId: string, provider: string, request: LlmRequest): string;
  get(tenantId: string, key: string): Promise<CachedResponse | undefined>;
  /** Stores a successful response; rejects a response without content (errors are never cached). */
  set(tenantId: string, key: string, value: CachedResponse): Promise<void>;
  /** True when an entry was removed. */
  bust(tenantId: string, key: string): Promise<boolean>;
  /** Removes every entry whose key starts with `prefix` (a true string prefix); returns how many. */
  bustPrefix(tenantId: string, prefix: string): Promise<number>;
  /** Describes a live entry without using it: no hit counted, recency and expiry untouched. */
  info(tenantId: string, key: string): Promise<CacheEntryInfo | undefined>;
  /** info() plus the cached value, still without counting a use (for inspection over HTTP). */
  peek(tenantId: string, key: string): Promise<CacheEntry | undefined>;
  /** Live entries whose key starts with `prefix`, in key order. */
  list(tenantId: string, prefix: string, limit: number): Promise<CacheEntryInfo[]>;
  stats(tenantId: string): CacheStats;
  /**
   * Identical concurrent misses share one in-flight computation: while `compute` for this
   * tenant+key is pending, other callers get its promise (`joined`). Settled (or rejected) promises
   * are forgotten at once, so a failure is never handed to a later caller.
   */
  collapse<T>(tenantId: string, key: string, compute: () => Promise<T>): { joined: boolean; result: Promise<T> };
  /**
   * Counts a caller that joined another's in-flight call (`collapse` said `joined`) as the hit it
   * is: its lookup's miss becomes a hit, and what it did not spend is saved.
   */
  countJoined(tenantId: string, response: LlmResponse, costUsd: number): void;
}

/** The persistent tier. `now` is passed in so expiry follows the injected Clock. */
export interface CacheStore {
  /** The live (not expired) entry, or undefined. */
  load(tenantId: string, key: string, now: number): Promise<CacheEntry | undefined>;
  /** Inserts or replaces (resetting hits). */
  save(entry: CacheEntry): Promise<void>;
  delete(tenantId: string, key: string): Promise<boolean>;
  /** Deletes every key starting with `prefix`; returns the deleted keys. */
  deletePrefix(tenantId: string, prefix: string): Promise<string[]>;
  /** Counts a hit and slides the expiry to `expiresAt`. */
  recordHit(tenantId: string, key: string, at: number, expiresAt: number): Promise<void>;
  info(tenantId: string, key: string, now: number): Promise<CacheEntryInfo | undefined>;
  /** Live entries whose key starts with `prefix`, in key order. */
  list(tenantId: string, prefix: string, limit: number, now: number): Promise<CacheEntryInfo[]>;
  /** Deletes up to `limit` expired entries (every tenant); returns how many. */
  purgeExpired(now: number, limit: number): Promise<number>;
}

/** The namespace (agent name) of a key `<namespace>:<hash>`. */
export function namespaceOf(key: string): string {
  const colon = key.lastIndexOf(':');
  return colon === -1 ? '' : key.slice(0, colon);
}
