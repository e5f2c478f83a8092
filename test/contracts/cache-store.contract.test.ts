import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CachedResponse, CacheEntry, CacheStore } from '../../src/domain/cache.js';
import { CACHE_STORE_ADAPTERS as ADAPTERS, type OpenedCacheStore } from './cache-store-adapters.js';

/**
 * What every persistent cache tier promises, through the port alone: entries read back intact,
 * expiry (live up to and including expiresAt), tenant scoping, hits sliding the expiry forward only,
 * true-prefix deletes and lists in key (code point) order, unreadable rows as misses, bounded sweeps.
 *
 * Where they differ, by design, and said here: `save` over a live entry. SQLite, one process,
 * replaces it (hits reset). PostgreSQL is shared by every instance and is insert-if-absent: the
 * first answer stored stays with its hits and expiry, and the other instances' identical answers
 * (misses are collapsed per instance only) leave it alone. Over an expired entry both replace.
 */
const value: CachedResponse = {
  response: {
    content: [
      { type: 'text', text: 'Looks good.' },
      { type: 'tool_use', id: 'tu_1', name: 'search', input: { q: 'x' } },
    ],
    stopReason: 'tool_use',
    usage: { inputTokens: 120, outputTokens: 30, cacheReadTokens: 7 },
    model: 'claude-sonnet-4-5',
    requestId: 'req_1',
  },
  modelId: 'anthropic/claude-sonnet-4-5',
  costUsd: 0.0042,
  createdAt: 1_000,
};

function entry(key: string, overrides: Partial<CacheEntry> = {}): CacheEntry {
  return {
    key,
    tenantId: 'acme',
    namespace: key.slice(0, key.lastIndexOf(':')),
    sizeBytes: Buffer.byteLength(JSON.stringify(value)),
    createdAt: 1_000,
    expiresAt: 10_000,
    hits: 0,
    lastHitAt: null,
    modelId: value.modelId,
    tokens: { input: 120, output: 30 },
    value,
    ...overrides,
  };
}

describe.each(ADAPTERS)('CacheStore contract: $name', (adapter) => {
  let fx: OpenedCacheStore;
  let store: CacheStore;
  beforeEach(async () => {
    fx = await adapter.open();
    store = fx.store;
  });
  afterEach(async () => {
    await fx.close();
  });

  it('saves and loads an entry, its value read back intact', async () => {
    await store.save(entry('analyst:1'));
    expect(await store.load('acme', 'analyst:1', 5_000)).toEqual(entry('analyst:1'));
    const { value: _, ...info } = entry('analyst:1');
    expect(await store.info('acme', 'analyst:1', 5_000)).toEqual(info);
  });

  it('treats expired rows as absent (live up to and including expiresAt)', async () => {
    await store.save(entry('analyst:1', { expiresAt: 10_000 }));
    expect(await store.load('acme', 'analyst:1', 10_000)).toBeDefined();
    expect(await store.load('acme', 'analyst:1', 10_001)).toBeUndefined();
    expect(await store.info('acme', 'analyst:1', 10_001)).toBeUndefined();
    expect(await store.list('acme', '', 10, 10_001)).toEqual([]);
  });

  it('scopes every read and delete to the tenant', async () => {
    await store.save(entry('analyst:1'));
    expect(await store.load('globex', 'analyst:1', 5_000)).toBeUndefined();
    expect(await store.delete('globex', 'analyst:1')).toBe(false);
    expect(await store.deletePrefix('globex', 'analyst:')).toEqual([]);
    expect(await store.list('globex', '', 10, 5_000)).toEqual([]);
    expect(await store.delete('acme', 'analyst:1')).toBe(true);
    expect(await store.delete('acme', 'analyst:1')).toBe(false);
  });

  it('replaces an expired entry on save, its hits reset', async () => {
    await store.save(entry('analyst:1', { expiresAt: 2_500 }));
    await store.recordHit('acme', 'analyst:1', 2_000, 2_500);
    await store.save(entry('analyst:1', { createdAt: 3_000, expiresAt: 13_000 }));
    expect(await store.info('acme', 'analyst:1', 5_000)).toMatchObject({
      hits: 0,
      lastHitAt: null,
      createdAt: 3_000,
      expiresAt: 13_000,
    });
  });

  it(
    adapter.name === 'sqlite'
      ? 'replaces a live entry on save, resetting its hits (one process)'
      : 'keeps a live entry on save: the first answer stored stays, with its hits (shared by instances)',
    async () => {
      await store.save(entry('analyst:1'));
      await store.recordHit('acme', 'analyst:1', 2_000, 12_000);
      await store.save(entry('analyst:1', { createdAt: 3_000, expiresAt: 13_000 }));
      const info = await store.info('acme', 'analyst:1', 5_000);
      if (adapter.name === 'sqlite') expect(info).toMatchObject({ hits: 0, lastHitAt: null, createdAt: 3_000 });
      else expect(info).toMatchObject({ hits: 1, lastHitAt: 2_000, createdAt: 1_000, expiresAt: 12_000 });
    },
  );

  it('keeps one entry when two instances store the same key at once', async () => {
    const peer = fx.peer();
    const other = { ...value, costUsd: 0.001 };
    await Promise.all([
      store.save(entry('analyst:race', { createdAt: 3_000, expiresAt: 13_000 })),
      peer.save(entry('analyst:race', { createdAt: 3_000, expiresAt: 13_000, value: other })),
    ]);
    const listed = await store.list('acme', 'analyst:race', 10, 5_000);
    expect(listed).toHaveLength(1);
    const loaded = await peer.load('acme', 'analyst:race', 5_000);
    expect([value.costUsd, other.costUsd]).toContain(loaded?.value.costUsd);
    expect(await store.load('acme', 'analyst:race', 5_000)).toEqual(loaded);
  });

  it('slides expiry forward on a hit, never backward', async () => {
    await store.save(entry('analyst:1', { expiresAt: 10_000 }));
    await store.recordHit('acme', 'analyst:1', 2_000, 8_000);
    expect(await store.info('acme', 'analyst:1', 5_000)).toMatchObject({ hits: 1, expiresAt: 10_000 });
    await store.recordHit('acme', 'analyst:1', 9_000, 19_000);
    expect(await store.info('acme', 'analyst:1', 15_000)).toMatchObject({ hits: 2, expiresAt: 19_000 });
  });

  it('deletes by true prefix: `_` and `%` are literal, analyst2: survives analyst:', async () => {
    const keys = ['analyst:1', 'analyst:2', 'analyst:\u{1F600}', 'analyst2:1', 'analystX1', 'an_lyst:1', 'a%:1'];
    for (const key of keys) await store.save(entry(key));
    await store.save({ ...entry('analyst:1'), tenantId: 'globex' });

    expect((await store.deletePrefix('acme', 'analyst:')).sort()).toEqual([
      'analyst:1',
      'analyst:2',
      'analyst:\u{1F600}',
    ]);
    expect(await store.deletePrefix('acme', 'an_')).toEqual(['an_lyst:1']);
    expect(await store.deletePrefix('acme', 'a%')).toEqual(['a%:1']);
    expect((await store.list('acme', '', 10, 5_000)).map((e) => e.key)).toEqual(['analyst2:1', 'analystX1']);
    expect(await store.load('globex', 'analyst:1', 5_000)).toBeDefined();
  });

  it('lists live entries by prefix in code point order, up to the limit', async () => {
    for (const key of ['b:2', 'a:3', 'b:1', 'b:3', 'b:Z', 'b:a', 'b:\u00e9', 'b:\u{1F600}', 'b:\uffff']) {
      await store.save(entry(key));
    }
    await store.save(entry('b:0', { expiresAt: 4_000 }));
    expect((await store.list('acme', 'b:', 2, 5_000)).map((e) => e.key)).toEqual(['b:1', 'b:2']);
    expect((await store.list('acme', 'b:', 20, 5_000)).map((e) => e.key)).toEqual([
      'b:1',
      'b:2',
      'b:3',
      'b:Z',
      'b:a',
      'b:\u00e9',
      'b:\uffff',
      'b:\u{1F600}',
    ]);
    expect((await store.list('acme', '\u{10FFFF}', 20, 5_000)).map((e) => e.key)).toEqual([]);
  });

  it('finds nothing for a key or prefix no entry has, U+0000 and hostile text included', async () => {
    await store.save(entry('analyst:1'));
    for (const key of ['analyst:1\u0000', '\u0000', "analyst:1' OR '1'='1", 'analyst:%', '']) {
      expect(await store.load('acme', key, 5_000), key).toBeUndefined();
      expect(await store.info('acme', key, 5_000), key).toBeUndefined();
      expect(await store.delete('acme', key), key).toBe(false);
    }
    for (const prefix of ['\u0000', 'analyst:1\u0000', "' OR 1=1 --", '%', '_']) {
      expect(await store.deletePrefix('acme', prefix), prefix).toEqual([]);
      expect(await store.list('acme', prefix, 10, 5_000), prefix).toEqual([]);
    }
    expect(await store.load('acme', 'analyst:1', 5_000)).toBeDefined();
  });

  it('reads a row it cannot parse as a miss, not a crash', async () => {
    await store.save(entry('analyst:1'));
    await store.save(entry('analyst:2'));
    await fx.corrupt('acme', 'analyst:1', '{not json');
    await fx.corrupt('acme', 'analyst:2', '{"response":{"content":[]}}');
    expect(await store.load('acme', 'analyst:1', 5_000)).toBeUndefined();
    expect(await store.load('acme', 'analyst:2', 5_000)).toBeUndefined();
  });

  it('purges expired rows in bounded batches, oldest first', async () => {
    for (let i = 1; i <= 5; i++) await store.save(entry(`a:${i}`, { expiresAt: i * 1_000 }));
    expect(await store.purgeExpired(4_500, 2)).toBe(2);
    expect((await store.list('acme', '', 10, 0)).map((e) => e.key)).toEqual(['a:3', 'a:4', 'a:5']);
    expect(await store.purgeExpired(4_500, 100)).toBe(2);
    expect((await store.list('acme', '', 10, 0)).map((e) => e.key)).toEqual(['a:5']);
  });
});
