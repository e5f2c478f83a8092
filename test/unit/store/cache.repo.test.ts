import { describe, expect, it } from 'vitest';
import type { CachedResponse, CacheEntry } from '../../../src/domain/cache.js';
import { prefixUpperBound } from '../../../src/store/cache-rows.js';
import { createSqliteCacheStore } from '../../../src/store/sqlite/cache.repo.js';
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
