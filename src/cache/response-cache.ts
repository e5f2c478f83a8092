import { LRUCache } from 'lru-cache';
import {
  type CachedResponse,
  type CacheEntryInfo,
  type CacheStore,
  namespaceOf,
  type ResponseCache,
} from '../domain/cache.js';
import type { LlmResponse } from '../domain/llm.js';
import type { Clock } from '../domain/ports.js';
import { cacheKey, effectiveRequest } from './cache-key.js';

/**
 * The two-tier response cache (docs/design.md#caching): lru-cache in memory, over an optional persistent
 * CacheStore. Memory keys are `${tenantId}\u0000${key}`, so tenants never see each other's
 * entries; stats are kept per tenant.
 */

export interface ResponseCacheOptions {
  /** The persistent tier (CACHE_PERSIST); without it the cache lives in memory only. */
  store?: CacheStore | undefined;
  clock: Clock;
  maxItems: number;
  /** Bound on the UTF-8 bytes of the cached JSON held in memory. */
  maxBytes: number;
  /** Sliding: every hit restarts it. */
  ttlMs: number;
  /**
   * Failures of the fire-and-forget writes (hit counters, expiry sweeps). They never fail a
   * lookup: a lost hit count is cheaper than a slower or failed provider call.
   */
  onError?: ((err: unknown) => void) | undefined;
}

interface MemoryEntry {
  tenantId: string;
  key: string;
  value: CachedResponse;
  sizeBytes: number;
  createdAt: number;
  hits: number;
  lastHitAt: number | null;
}

interface Counters {
  hits: number;
  misses: number;
  tokensSaved: number;
  costSavedUsd: number;
  simulatedCostSavedUsd: number;
  size: number;
  sizeBytes: number;
}

/**
 * Rows purged per commit, and the pause between two: a 500-row batch (entries carry their whole
 * answer) held the event loop 20–40 ms in the load soak's profile; 100 rows keep each under ~8 ms.
 */
const SWEEP_BATCH = 100;
const SWEEP_PAUSE_MS = 10;
const SWEEP_EVERY_MS = 60_000;

function memoryKey(tenantId: string, key: string): string {
  return `${tenantId}\u0000${key}`;
}

function toInfo(entry: MemoryEntry, expiresAt: number): CacheEntryInfo {
  const { usage } = entry.value.response;
  return {
    key: entry.key,
    tenantId: entry.tenantId,
    namespace: namespaceOf(entry.key),
    sizeBytes: entry.sizeBytes,
    createdAt: entry.createdAt,
    expiresAt,
    hits: entry.hits,
    lastHitAt: entry.lastHitAt,
    modelId: entry.value.modelId,
    tokens: { input: usage.inputTokens, output: usage.outputTokens },
  };
}

export function createResponseCache(options: ResponseCacheOptions): ResponseCache {
  const { store, clock, ttlMs } = options;
  const onError = options.onError ?? (() => {});
  const counters = new Map<string, Counters>();
  const inFlight = new Map<string, Promise<unknown>>();
  let lastSweepAt = Number.NEGATIVE_INFINITY;
  let sweeping = false;

  const countersOf = (tenantId: string): Counters => {
    let c = counters.get(tenantId);
    if (c === undefined) {
      c = { hits: 0, misses: 0, tokensSaved: 0, costSavedUsd: 0, simulatedCostSavedUsd: 0, size: 0, sizeBytes: 0 };
      counters.set(tenantId, c);
    }
    return c;
  };

  const memory = new LRUCache<string, MemoryEntry>({
    max: options.maxItems,
    maxSize: options.maxBytes,
    sizeCalculation: (entry) => entry.sizeBytes,
    ttl: ttlMs,
    updateAgeOnGet: true,
    allowStale: false,
    // No per-entry timers (ttlAutopurge): they would not follow an injected clock. Expired entries
    // are dropped when touched and by stats(); maxSize bounds them meanwhile.
    ttlAutopurge: false,
    // Read the clock on every check instead of caching it for 1 ms behind a timer.
    ttlResolution: 0,
    // lru-cache treats a start time of 0 as "no TTL", so the clock is shifted off zero.
    // Stryker disable next-line ArithmeticOperator: lru-cache reads only differences of perf.now(), and an epoch clock is never near 0
    perf: { now: () => clock.now() + 1 },
    // Per-tenant size accounting: every insertion and every removal (evict, expire, delete, replace).
    onInsert: (entry, _key, reason) => {
      // Stryker disable next-line ConditionalExpression,StringLiteral: set() always stores a new entry object, so lru-cache reports a replace (after a dispose), never an update
      if (reason === 'update') return;
      const c = countersOf(entry.tenantId);
      c.size += 1;
      c.sizeBytes += entry.sizeBytes;
    },
    dispose: (entry) => {
      const c = countersOf(entry.tenantId);
      c.size -= 1;
      c.sizeBytes -= entry.sizeBytes;
    },
  });

  function countSaved(c: Counters, response: LlmResponse, costUsd: number): void {
    c.hits += 1;
    c.tokensSaved += response.usage.inputTokens + response.usage.outputTokens;
    if (response.simulated === true) c.simulatedCostSavedUsd += costUsd;
    else c.costSavedUsd += costUsd;
  }

  function served(entry: MemoryEntry, now: number): CachedResponse {
    const { response, costUsd } = entry.value;
    countSaved(countersOf(entry.tenantId), response, costUsd);
    entry.hits += 1;
    entry.lastHitAt = now;
    // Sliding expiry in SQLite too, so an entry kept hot in memory survives a restart.
    store?.recordHit(entry.tenantId, entry.key, now, now + ttlMs).catch(onError);
    return entry.value;
  }

  /**
   * Purges every row expired by `now`, SWEEP_BATCH rows a commit with SWEEP_PAUSE_MS between, until
   * a batch comes back short. One batch a minute could not keep up with the rate
   * entries are written (the load soak: ~40 a second), and the file grew without end.
   */
  function sweep(now: number): void {
    if (store === undefined || sweeping || now - lastSweepAt < SWEEP_EVERY_MS) return;
    lastSweepAt = now;
    sweeping = true;
    const persistent = store;
    void (async () => {
      try {
        // Stryker disable next-line BlockStatement: the pause only spaces the batches out; the same entries are purged
        while ((await persistent.purgeExpired(now, SWEEP_BATCH)) === SWEEP_BATCH) {
          await new Promise((resolve) => setTimeout(resolve, SWEEP_PAUSE_MS));
        }
      } catch (err) {
        onError(err);
      } finally {
        sweeping = false;
      }
    })();
  }

  return {
    keyFor(namespace, tenantId, provider, request) {
      return cacheKey(namespace, effectiveRequest(tenantId, provider, request));
    },

    async get(tenantId, key) {
      const mk = memoryKey(tenantId, key);
      const entry = memory.get(mk);
      if (entry !== undefined) return served(entry, clock.now());
      if (store !== undefined) {
        const stored = await store.load(tenantId, key, clock.now());
        // A set() may have landed while SQLite was read: the newer memory entry wins.
        const landed = memory.get(mk);
        if (landed !== undefined) return served(landed, clock.now());
        if (stored !== undefined) {
          // Promote: the next lookup is a memory hit. Too big for memory? Then it is served from disk.
          const promoted: MemoryEntry = {
            tenantId,
            key,
            value: stored.value,
            sizeBytes: stored.sizeBytes,
            createdAt: stored.createdAt,
            hits: stored.hits,
            lastHitAt: stored.lastHitAt,
          };
          memory.set(mk, promoted);
          return served(promoted, clock.now());
        }
      }
      countersOf(tenantId).misses += 1;
      return undefined;
    },

    async set(tenantId, key, value) {
      // Never cache a failure: only a response with content is an answer worth replaying.
      if (!Array.isArray(value?.response?.content) || value.response.content.length === 0) {
        throw new TypeError(`refusing to cache a response without content (key ${key})`);
      }
      if (!Number.isFinite(value.costUsd) || value.costUsd < 0) {
        throw new TypeError(`refusing to cache a response with an invalid costUsd (key ${key})`);
      }
      const sizeBytes = Buffer.byteLength(JSON.stringify(value));
      const now = clock.now();
      const entry: MemoryEntry = { tenantId, key, value, sizeBytes, createdAt: now, hits: 0, lastHitAt: null };
      memory.set(memoryKey(tenantId, key), entry);
      if (store === undefined) return;
      const { usage } = value.response;
      await store.save({
        key,
        tenantId,
        namespace: namespaceOf(key),
        sizeBytes,
        createdAt: now,
        expiresAt: now + ttlMs,
        hits: 0,
        lastHitAt: null,
        modelId: value.modelId,
        tokens: { input: usage.inputTokens, output: usage.outputTokens },
        value,
      });
      sweep(now);
    },

    async bust(tenantId, key) {
      const inMemory = memory.delete(memoryKey(tenantId, key));
      const onDisk = store === undefined ? false : await store.delete(tenantId, key);
      return inMemory || onDisk;
    },

    async bustPrefix(tenantId, prefix) {
      const start = memoryKey(tenantId, prefix);
      const removed = new Set<string>();
      for (const mk of memory.keys()) {
        if (mk.startsWith(start)) removed.add(mk.slice(tenantId.length + 1));
      }
      for (const key of removed) memory.delete(memoryKey(tenantId, key));
      if (store !== undefined) for (const key of await store.deletePrefix(tenantId, prefix)) removed.add(key);
      return removed.size;
    },

    async info(tenantId, key) {
      const mk = memoryKey(tenantId, key);
      // peek: looking at an entry is not a use of it (no recency, no hit).
      const entry = memory.peek(mk);
      const now = clock.now();
      if (entry !== undefined) return toInfo(entry, now + memory.getRemainingTTL(mk));
      return store?.info(tenantId, key, now);
    },

    async peek(tenantId, key) {
      const mk = memoryKey(tenantId, key);
      const entry = memory.peek(mk);
      const now = clock.now();
      if (entry !== undefined) return { ...toInfo(entry, now + memory.getRemainingTTL(mk)), value: entry.value };
      return store?.load(tenantId, key, now);
    },

    async list(tenantId, prefix, limit) {
      const now = clock.now();
      const start = memoryKey(tenantId, prefix);
      const byKey = new Map<string, CacheEntryInfo>();
      // Disk first, memory over it: memory has the fresher hit counts and entries not yet committed.
      if (store !== undefined)
        for (const info of await store.list(tenantId, prefix, limit, now)) byKey.set(info.key, info);
      for (const [mk, entry] of memory.entries()) {
        if (mk.startsWith(start)) byKey.set(entry.key, toInfo(entry, now + memory.getRemainingTTL(mk)));
      }
      // Keys are unique (a Map by key), so no two compare equal.
      // Stryker disable next-line EqualityOperator: with unique keys `<=` and `<` never differ
      return [...byKey.values()].sort((a, b) => (a.key < b.key ? -1 : 1)).slice(0, limit);
    },

    stats(tenantId) {
      // Drops expired entries so size and sizeBytes count live ones only; O(entries), off the hot path.
      memory.purgeStale();
      const c = counters.get(tenantId);
      if (c === undefined) {
        return {
          hits: 0,
          misses: 0,
          hitRate: 0,
          size: 0,
          sizeBytes: 0,
          tokensSaved: 0,
          costSavedUsd: 0,
          simulatedCostSavedUsd: 0,
        };
      }
      const lookups = c.hits + c.misses;
      return {
        hits: c.hits,
        misses: c.misses,
        hitRate: lookups === 0 ? 0 : c.hits / lookups,
        size: c.size,
        sizeBytes: c.sizeBytes,
        tokensSaved: c.tokensSaved,
        costSavedUsd: c.costSavedUsd,
        simulatedCostSavedUsd: c.simulatedCostSavedUsd,
      };
    },

    countJoined(tenantId, response, costUsd) {
      const c = countersOf(tenantId);
      c.misses -= 1;
      countSaved(c, response, costUsd);
    },

    collapse<T>(tenantId: string, key: string, compute: () => Promise<T>): { joined: boolean; result: Promise<T> } {
      const mk = memoryKey(tenantId, key);
      const pending = inFlight.get(mk);
      if (pending !== undefined) return { joined: true, result: pending as Promise<T> };
      // Wrapped so a synchronous throw becomes a rejection shared like any other.
      const promise = (async () => compute())();
      inFlight.set(mk, promise);
      const forget = (): void => {
        if (inFlight.get(mk) === promise) inFlight.delete(mk);
      };
      // Both branches handled: this bookkeeping chain must never raise an unhandled rejection.
      promise.then(forget, forget);
      return { joined: false, result: promise };
    },
  };
}
