import { describe, expect, it } from 'vitest';
import type { CachedResponse, CacheEntry } from '../../../src/domain/cache.js';
import { createSqliteCacheStore, prefixUpperBound } from '../../../src/store/sqlite/cache.repo.js';
import { openDatabase } from '../../../src/store/sqlite/db.js';
import { createGroupCommitter } from '../../../src/store/sqlite/group-commit.js';

function openStore() {
  const db = openDatabase(':memory:', { synchronous: 'NORMAL' });
  return { db, store: createSqliteCacheStore(db, createGroupCommitter(db)) };
}

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

describe('createSqliteCacheStore', () => {
  it('saves and loads an entry, its value read back intact', async () => {
    const { store } = openStore();
    await store.save(entry('analyst:1'));
    expect(await store.load('acme', 'analyst:1', 5_000)).toEqual(entry('analyst:1'));
    const { value: _, ...info } = entry('analyst:1');
    expect(await store.info('acme', 'analyst:1', 5_000)).toEqual(info);
  });

  it('treats expired rows as absent (live up to and including expiresAt)', async () => {
    const { store } = openStore();
    await store.save(entry('analyst:1', { expiresAt: 10_000 }));
    expect(await store.load('acme', 'analyst:1', 10_000)).toBeDefined();
    expect(await store.load('acme', 'analyst:1', 10_001)).toBeUndefined();
    expect(await store.info('acme', 'analyst:1', 10_001)).toBeUndefined();
    expect(await store.list('acme', '', 10, 10_001)).toEqual([]);
  });

  it('scopes every read and delete to the tenant', async () => {
    const { store } = openStore();
    await store.save(entry('analyst:1'));
    expect(await store.load('globex', 'analyst:1', 5_000)).toBeUndefined();
    expect(await store.delete('globex', 'analyst:1')).toBe(false);
    expect(await store.deletePrefix('globex', 'analyst:')).toEqual([]);
    expect(await store.list('globex', '', 10, 5_000)).toEqual([]);
    expect(await store.delete('acme', 'analyst:1')).toBe(true);
    expect(await store.delete('acme', 'analyst:1')).toBe(false);
  });

  it('replaces an entry on save, resetting its hits', async () => {
    const { store } = openStore();
    await store.save(entry('analyst:1'));
    await store.recordHit('acme', 'analyst:1', 2_000, 12_000);
    expect(await store.info('acme', 'analyst:1', 5_000)).toMatchObject({
      hits: 1,
      lastHitAt: 2_000,
      expiresAt: 12_000,
    });
    await store.save(entry('analyst:1', { createdAt: 3_000, expiresAt: 13_000 }));
    expect(await store.info('acme', 'analyst:1', 5_000)).toMatchObject({ hits: 0, lastHitAt: null, createdAt: 3_000 });
  });

  it('slides expiry forward on a hit, never backward', async () => {
    const { store } = openStore();
    await store.save(entry('analyst:1', { expiresAt: 10_000 }));
    await store.recordHit('acme', 'analyst:1', 2_000, 8_000);
    expect(await store.info('acme', 'analyst:1', 5_000)).toMatchObject({ hits: 1, expiresAt: 10_000 });
    await store.recordHit('acme', 'analyst:1', 9_000, 19_000);
    expect(await store.info('acme', 'analyst:1', 15_000)).toMatchObject({ hits: 2, expiresAt: 19_000 });
  });

  it('deletes by true prefix: `_` and `%` are literal, analyst2: survives analyst:', async () => {
    const { store } = openStore();
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

  it('lists live entries by prefix in key order, up to the limit', async () => {
    const { store } = openStore();
    for (const key of ['b:2', 'a:3', 'b:1', 'b:3']) await store.save(entry(key));
    await store.save(entry('b:0', { expiresAt: 4_000 }));
    expect((await store.list('acme', 'b:', 2, 5_000)).map((e) => e.key)).toEqual(['b:1', 'b:2']);
    expect((await store.list('acme', 'b:', 10, 5_000)).map((e) => e.key)).toEqual(['b:1', 'b:2', 'b:3']);
  });

  it('reads a row it cannot parse as a miss, not a crash', async () => {
    const { db, store } = openStore();
    await store.save(entry('analyst:1'));
    await store.save(entry('analyst:2'));
    db.prepare("UPDATE cache_entries SET value = '{not json' WHERE key = 'analyst:1'").run();
    db.prepare(`UPDATE cache_entries SET value = '{"response":{"content":[]}}' WHERE key = 'analyst:2'`).run();
    expect(await store.load('acme', 'analyst:1', 5_000)).toBeUndefined();
    expect(await store.load('acme', 'analyst:2', 5_000)).toBeUndefined();
  });

  it('purges expired rows in bounded batches, oldest first', async () => {
    const { store } = openStore();
    for (let i = 1; i <= 5; i++) await store.save(entry(`a:${i}`, { expiresAt: i * 1_000 }));
    expect(await store.purgeExpired(4_500, 2)).toBe(2);
    expect((await store.list('acme', '', 10, 0)).map((e) => e.key)).toEqual(['a:3', 'a:4', 'a:5']);
    expect(await store.purgeExpired(4_500, 100)).toBe(2);
    expect((await store.list('acme', '', 10, 0)).map((e) => e.key)).toEqual(['a:5']);
  });

  it('uses the primary key for prefix ranges and the expiry index for sweeps', () => {
    const { db } = openStore();
    const plan = (sql: string) =>
      (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as Array<{ detail: string }>).map((r) => r.detail).join('; ');
    expect(plan("SELECT key FROM cache_entries WHERE tenant_id = 'a' AND key >= 'x' AND key < 'y'")).toMatch(
      /SEARCH cache_entries USING PRIMARY KEY \(tenant_id=\? AND key>\? AND key<\?\)/,
    );
    expect(plan('SELECT key FROM cache_entries WHERE expires_at < 5 ORDER BY expires_at LIMIT 10')).toMatch(
      /cache_entries_by_expiry/,
    );
  });
});

describe('prefixUpperBound', () => {
  it('is the prefix with its last code point incremented', () => {
    expect(prefixUpperBound('analyst:')).toBe('analyst;');
    expect(prefixUpperBound('a\uffff')).toBe('a\u{10000}');
    expect(prefixUpperBound('a\u{10FFFF}')).toBe('b');
    expect(prefixUpperBound('\u{10FFFF}')).toBeUndefined();
    expect(prefixUpperBound('')).toBeUndefined();
    expect(prefixUpperBound('a\ud7ff')).toBe('a\ue000');
  });
});
