import { describe, expect, it } from 'vitest';
import { createResponseCache, type ResponseCacheOptions } from '../../../src/cache/response-cache.js';
import type { CachedResponse } from '../../../src/domain/cache.js';
import type { Clock } from '../../../src/domain/ports.js';
import { createSqliteCacheStore } from '../../../src/store/sqlite/cache.repo.js';
import { openDatabase } from '../../../src/store/sqlite/db.js';
import { createGroupCommitter } from '../../../src/store/sqlite/group-commit.js';

const START = Date.UTC(2025, 5, 1);
const TTL = 60_000;

function manualClock(start = START): Clock & { advance(ms: number): void } {
  let now = start;
  return {
    now: () => now,
    sleep: async () => {},
    advance(ms) {
      now += ms;
    },
  };
}

function answer(text: string, usage = { inputTokens: 10, outputTokens: 5 }, costUsd = 0.01): CachedResponse {
  return {
    response: {
      content: [{ type: 'text', text }],
      stopReason: 'end_turn',
      usage,
      model: 'claude-sonnet-4-5',
      requestId: null,
    },
    modelId: 'anthropic/claude-sonnet-4-5',
    costUsd,
    createdAt: START,
  };
}

/** Background writes (hit counts, sweeps) must not fail silently in tests: surfaced as unhandled errors. */
const rethrow = (err: unknown): never => {
  throw err;
};

const bytes = (value: CachedResponse): number => Buffer.byteLength(JSON.stringify(value));

function sqliteStore() {
  const db = openDatabase(':memory:', { synchronous: 'NORMAL' });
  const committer = createGroupCommitter(db);
  return { db, committer, store: createSqliteCacheStore(db, committer) };
}

function memoryCache(overrides: Partial<ResponseCacheOptions> = {}) {
  const clock = manualClock();
  const cache = createResponseCache({
    clock,
    maxItems: 1000,
    maxBytes: 50 * 1024 * 1024,
    ttlMs: TTL,
    onError: rethrow,
    ...overrides,
  });
  return { clock, cache };
}

describe('createResponseCache: memory tier', () => {
  it('refuses a response without content or with an invalid cost, and takes a free one', async () => {
    const { cache } = memoryCache();
    const empty = { ...answer('x'), response: { ...answer('x').response, content: [] } };
    await expect(cache.set('acme', 'a:1', empty)).rejects.toThrow(
      'refusing to cache a response without content (key a:1)',
    );
    const noResponse = { ...answer('x'), response: undefined } as unknown as CachedResponse;
    await expect(cache.set('acme', 'a:2', noResponse)).rejects.toThrow('without content (key a:2)');
    for (const costUsd of [Number.NaN, Number.POSITIVE_INFINITY, -0.01]) {
      await expect(cache.set('acme', 'a:3', answer('x', undefined, costUsd))).rejects.toThrow(
        'refusing to cache a response with an invalid costUsd (key a:3)',
      );
    }
    await cache.set('acme', 'a:4', answer('free', undefined, 0));
    expect(await cache.get('acme', 'a:4')).toEqual(answer('free', undefined, 0));
    // Stored and looked up once: the rate is of lookups, never 0/0.
    expect(cache.stats('acme').hitRate).toBe(1);
  });

  it('says when an entry expires, in peek and in list alike', async () => {
    const { clock, cache } = memoryCache();
    await cache.set('acme', 'a:1', answer('one'));
    clock.advance(1_000);
    expect((await cache.peek('acme', 'a:1'))?.expiresAt).toBe(START + TTL);
    expect((await cache.list('acme', 'a:', 10)).map((e) => e.expiresAt)).toEqual([START + TTL]);
  });

  it('reports a hit rate of 0, not NaN, for a tenant with entries but no lookups yet', async () => {
    const { cache } = memoryCache();
    await cache.set('acme', 'a:1', answer('one'));
    expect(cache.stats('acme').hitRate).toBe(0);
  });

  it('serves what was set, and misses what was not', async () => {
    const { cache } = memoryCache();
    await cache.set('acme', 'analyst:1', answer('one'));
    expect(await cache.get('acme', 'analyst:1')).toEqual(answer('one'));
    expect(await cache.get('acme', 'analyst:2')).toBeUndefined();
  });

  it('evicts the least recently used entries by bytes and stays within maxBytes', async () => {
    const size = bytes(answer('entry-00'));
    const maxBytes = size * 3 + Math.floor(size / 2);
    const { cache } = memoryCache({ maxBytes });
    for (let i = 0; i < 3; i++) await cache.set('acme', `a:${i}`, answer(`entry-${String(i).padStart(2, '0')}`));
    expect(cache.stats('acme')).toMatchObject({ size: 3, sizeBytes: size * 3 });

    await cache.get('acme', 'a:0'); // a:0 is now more recent than a:1
    await cache.set('acme', 'a:3', answer('entry-3'));
    expect(await cache.get('acme', 'a:1')).toBeUndefined();
    expect(await cache.get('acme', 'a:0')).toBeDefined();
    for (let i = 4; i < 20; i++) {
      await cache.set('acme', `a:${i}`, answer(`entry-${String(i).padStart(2, '0')}`));
      expect(cache.stats('acme').sizeBytes).toBeLessThanOrEqual(maxBytes);
    }
    expect(cache.stats('acme')).toMatchObject({ size: 3, sizeBytes: size * 3 });
    expect(await cache.get('acme', 'a:0')).toBeUndefined();
  });

  it('expires entries after the TTL of the injected clock; a hit restarts it', async () => {
    const { cache, clock } = memoryCache();
    await cache.set('acme', 'a:idle', answer('idle'));
    await cache.set('acme', 'a:busy', answer('busy'));
    clock.advance(TTL / 2);
    expect(await cache.get('acme', 'a:busy')).toBeDefined();
    clock.advance(TTL / 2 + 1);
    expect(await cache.get('acme', 'a:idle')).toBeUndefined();
    expect(await cache.get('acme', 'a:busy')).toBeDefined();
    clock.advance(TTL + 1);
    expect(await cache.get('acme', 'a:busy')).toBeUndefined();
    expect(cache.stats('acme')).toMatchObject({ size: 0, sizeBytes: 0, hits: 2, misses: 2 });
  });

  it('keeps tenants apart: lookups, busts, listings and stats', async () => {
    const { cache } = memoryCache();
    await cache.set('acme', 'analyst:1', answer('acme'));
    expect(await cache.get('globex', 'analyst:1')).toBeUndefined();
    expect(await cache.info('globex', 'analyst:1')).toBeUndefined();
    expect(await cache.list('globex', '', 10)).toEqual([]);
    expect(await cache.bust('globex', 'analyst:1')).toBe(false);
    expect(await cache.bustPrefix('globex', 'analyst:')).toBe(0);
    await cache.set('globex', 'analyst:1', answer('globex'));
    expect((await cache.get('acme', 'analyst:1'))?.response.content).toEqual([{ type: 'text', text: 'acme' }]);
    expect((await cache.get('globex', 'analyst:1'))?.response.content).toEqual([{ type: 'text', text: 'globex' }]);
    expect(cache.stats('acme')).toMatchObject({ hits: 1, misses: 0, size: 1 });
    expect(cache.stats('globex')).toMatchObject({ hits: 1, misses: 1, size: 1 });
  });

  it('busts by true string prefix only', async () => {
    const { cache } = memoryCache();
    for (const key of ['analyst:1', 'analyst:2', 'analyst2:1', 'analystX1', 'writer:1']) {
      await cache.set('acme', key, answer(key));
    }
    expect(await cache.bustPrefix('acme', 'analyst:')).toBe(2);
    expect((await cache.list('acme', '', 10)).map((e) => e.key)).toEqual(['analyst2:1', 'analystX1', 'writer:1']);
    expect(await cache.bust('acme', 'writer:1')).toBe(true);
    expect(await cache.bust('acme', 'writer:1')).toBe(false);
  });

  it('adds up hits, misses, hit rate, tokens and cost saved', async () => {
    const { cache } = memoryCache();
    expect(cache.stats('acme')).toEqual({
      hits: 0,
      misses: 0,
      hitRate: 0,
      size: 0,
      sizeBytes: 0,
      tokensSaved: 0,
      costSavedUsd: 0,
      simulatedCostSavedUsd: 0,
    });
    const small = answer('small', { inputTokens: 10, outputTokens: 5 }, 0.01);
    const large = answer('large', { inputTokens: 100, outputTokens: 50 }, 0.2);
    await cache.set('acme', 'a:small', small);
    await cache.set('acme', 'a:large', large);
    for (let i = 0; i < 3; i++) await cache.get('acme', 'a:small');
    await cache.get('acme', 'a:large');
    await cache.get('acme', 'a:none');
    await cache.get('acme', 'a:none');
    const stats = cache.stats('acme');
    expect(stats).toMatchObject({ hits: 4, misses: 2, size: 2, sizeBytes: bytes(small) + bytes(large) });
    expect(stats.hitRate).toBeCloseTo(4 / 6, 10);
    expect(stats.tokensSaved).toBe(3 * 15 + 150);
    expect(stats.costSavedUsd).toBeCloseTo(0.23, 10);
  });

  it('keeps what simulated answers would have cost apart, and counts a joined call as a hit', async () => {
    const { cache } = memoryCache();
    const simulated = answer('sim', { inputTokens: 8, outputTokens: 2 }, 0.5);
    simulated.response.simulated = true;
    await cache.set('acme', 'a:sim', simulated);
    await cache.get('acme', 'a:sim');
    await cache.get('acme', 'a:joined');
    cache.countJoined('acme', answer('real', { inputTokens: 1, outputTokens: 1 }, 0.25).response, 0.25);
    expect(cache.stats('acme')).toMatchObject({
      hits: 2,
      misses: 0,
      tokensSaved: 12,
      costSavedUsd: 0.25,
      simulatedCostSavedUsd: 0.5,
    });
  });

  it('replacing an entry keeps size accounting exact', async () => {
    const { cache } = memoryCache();
    await cache.set('acme', 'a:1', answer('short'));
    await cache.set('acme', 'a:1', answer('a much longer answer than before'));
    expect(cache.stats('acme')).toMatchObject({
      size: 1,
      sizeBytes: bytes(answer('a much longer answer than before')),
    });
    await cache.bust('acme', 'a:1');
    expect(cache.stats('acme')).toMatchObject({ size: 0, sizeBytes: 0 });
  });

  it('refuses to cache a response without content', async () => {
    const { cache } = memoryCache();
    const empty = answer('x');
    empty.response.content = [];
    await expect(cache.set('acme', 'a:1', empty)).rejects.toThrow(TypeError);
    expect(await cache.get('acme', 'a:1')).toBeUndefined();
    expect(cache.stats('acme').size).toBe(0);
  });

  it('describes entries without counting a use', async () => {
    const { cache, clock } = memoryCache();
    await cache.set('acme', 'analyst:1', answer('one'));
    clock.advance(1000);
    await cache.get('acme', 'analyst:1');
    const info = await cache.info('acme', 'analyst:1');
    expect(info).toMatchObject({
      key: 'analyst:1',
      tenantId: 'acme',
      namespace: 'analyst',
      sizeBytes: bytes(answer('one')),
      createdAt: START,
      expiresAt: START + 1000 + TTL,
      hits: 1,
      lastHitAt: START + 1000,
      modelId: 'anthropic/claude-sonnet-4-5',
      tokens: { input: 10, output: 5 },
    });
    expect((await cache.peek('acme', 'analyst:1'))?.value).toEqual(answer('one'));
    expect(cache.stats('acme').hits).toBe(1);
  });
});

describe('createResponseCache: SQLite tier', () => {
  it('peeks at an entry only SQLite holds, value included, without counting a hit', async () => {
    const { store } = sqliteStore();
    const clock = manualClock();
    const options = { store, clock, maxItems: 100, maxBytes: 1_000_000, ttlMs: TTL, onError: rethrow };
    await createResponseCache(options).set('acme', 'a:1', answer('disk'));
    const restarted = createResponseCache(options);
    expect(await restarted.peek('acme', 'a:1')).toMatchObject({ key: 'a:1', value: answer('disk') });
    expect(await restarted.peek('acme', 'a:2')).toBeUndefined();
    expect(restarted.stats('acme')).toMatchObject({ hits: 0, size: 0 });
  });

  it('a sweep that fails is reported, and the next one, a minute later, runs again', async () => {
    const { store } = sqliteStore();
    const clock = manualClock();
    const errors: unknown[] = [];
    let purges = 0;
    const failing = Object.assign(Object.create(store) as typeof store, {
      purgeExpired: async () => {
        purges++;
        throw new Error('disk gone');
      },
    });
    const cache = createResponseCache({
      store: failing,
      clock,
      maxItems: 100,
      maxBytes: 1_000_000,
      ttlMs: TTL,
      onError: (err) => errors.push(err),
    });
    const settle = () => new Promise((resolve) => setImmediate(resolve));
    await cache.set('acme', 'a:1', answer('one'));
    await settle();
    expect([purges, errors.map(String)]).toEqual([1, ['Error: disk gone']]);
    await cache.set('acme', 'a:2', answer('two'));
    await settle();
    expect(purges).toBe(1);
    clock.advance(60_000);
    await cache.set('acme', 'a:3', answer('three'));
    await settle();
    expect([purges, errors.length]).toEqual([2, 2]);
  });

  it('a fresh cache over the same store serves a hit from SQLite and promotes it', async () => {
    const { store, db } = sqliteStore();
    const clock = manualClock();
    const options = { store, clock, maxItems: 100, maxBytes: 1_000_000, ttlMs: TTL, onError: rethrow };
    await createResponseCache(options).set('acme', 'analyst:1', answer('persisted'));

    const restarted = createResponseCache(options);
    expect(restarted.stats('acme').size).toBe(0);
    expect(await restarted.get('acme', 'analyst:1')).toEqual(answer('persisted'));
    expect(restarted.stats('acme')).toMatchObject({ hits: 1, misses: 0, size: 1 });

    // Promoted: served from memory even once the row is gone.
    db.prepare('DELETE FROM cache_entries').run();
    expect(await restarted.get('acme', 'analyst:1')).toEqual(answer('persisted'));
    expect(await restarted.get('globex', 'analyst:1')).toBeUndefined();
  });

  it('slides the persisted expiry on hits and misses once it passed', async () => {
    const { store } = sqliteStore();
    const clock = manualClock();
    const options = { store, clock, maxItems: 100, maxBytes: 1_000_000, ttlMs: TTL, onError: rethrow };
    const first = createResponseCache(options);
    await first.set('acme', 'a:1', answer('one'));
    clock.advance(TTL - 1);
    expect(await first.get('acme', 'a:1')).toBeDefined();
    await new Promise((resolve) => setImmediate(resolve)); // the hit's group commit
    expect(await store.info('acme', 'a:1', clock.now())).toMatchObject({ hits: 1, expiresAt: clock.now() + TTL });

    clock.advance(TTL - 1);
    expect(await createResponseCache(options).get('acme', 'a:1')).toBeDefined();
    clock.advance(TTL + 1);
    const late = createResponseCache(options);
    expect(await late.get('acme', 'a:1')).toBeUndefined();
    expect(late.stats('acme')).toMatchObject({ hits: 0, misses: 1 });
  });

  it('busts in both tiers, by key and by true prefix', async () => {
    const { store } = sqliteStore();
    const clock = manualClock();
    const options = { store, clock, maxItems: 100, maxBytes: 1_000_000, ttlMs: TTL, onError: rethrow };
    const cache = createResponseCache(options);
    for (const key of ['analyst:1', 'analyst:2', 'analyst2:1', 'analyst_x:1', 'writer:1']) {
      await cache.set('acme', key, answer(key));
    }
    await cache.set('globex', 'analyst:1', answer('globex'));
    expect(await cache.bustPrefix('acme', 'analyst:')).toBe(2);
    expect(await cache.bust('acme', 'writer:1')).toBe(true);

    const restarted = createResponseCache(options);
    expect((await restarted.list('acme', '', 10)).map((e) => e.key)).toEqual(['analyst2:1', 'analyst_x:1']);
    expect(await restarted.get('acme', 'analyst:1')).toBeUndefined();
    expect(await restarted.get('globex', 'analyst:1')).toBeDefined();
  });

  it('lists memory and SQLite entries together, in key order, up to the limit', async () => {
    const { store } = sqliteStore();
    const clock = manualClock();
    const options = { store, clock, maxItems: 100, maxBytes: 1_000_000, ttlMs: TTL, onError: rethrow };
    await createResponseCache(options).set('acme', 'a:2', answer('disk'));
    const cache = createResponseCache(options);
    await cache.set('acme', 'a:1', answer('both'));
    await cache.get('acme', 'a:2');
    const listed = await cache.list('acme', 'a:', 10);
    expect(listed.map((e) => [e.key, e.hits])).toEqual([
      ['a:1', 0],
      ['a:2', 1],
    ]);
    expect((await cache.list('acme', 'a:', 1)).map((e) => e.key)).toEqual(['a:1']);
  });
});

describe('createResponseCache: collapse', () => {
  it('runs one computation for identical concurrent misses', async () => {
    const { cache } = memoryCache();
    let calls = 0;
    let release: (value: string) => void = () => {};
    const compute = () => {
      calls += 1;
      return new Promise<string>((resolve) => {
        release = resolve;
      });
    };
    const shared = Array.from({ length: 10 }, () => cache.collapse('acme', 'a:1', compute));
    // The first caller computes; the nine others joined its call.
    expect(shared.map((s) => s.joined)).toEqual([false, ...Array(9).fill(true)]);
    release('answer');
    expect(await Promise.all(shared.map((s) => s.result))).toEqual(Array(10).fill('answer'));
    expect(calls).toBe(1);

    // Settled: the next miss computes again; other keys and tenants never share.
    await Promise.all([
      cache.collapse('acme', 'a:1', async () => calls++).result,
      cache.collapse('acme', 'a:2', async () => calls++).result,
      cache.collapse('globex', 'a:1', async () => calls++).result,
    ]);
    expect(calls).toBe(4);
  });

  it('never hands a failure to a later caller', async () => {
    const { cache } = memoryCache();
    let calls = 0;
    const failing = async (): Promise<string> => {
      calls += 1;
      await new Promise((resolve) => setImmediate(resolve));
      throw new Error('provider down');
    };
    const concurrent = [cache.collapse('acme', 'a:1', failing), cache.collapse('acme', 'a:1', failing)];
    for (const attempt of concurrent) await expect(attempt.result).rejects.toThrow('provider down');
    expect(calls).toBe(1);

    expect(await cache.collapse('acme', 'a:1', async () => 'recovered').result).toBe('recovered');
    // A synchronous throw is a rejection like any other, and is not kept either.
    const throwing = (): Promise<string> => {
      throw new Error('sync');
    };
    await expect(cache.collapse('acme', 'a:1', throwing).result).rejects.toThrow('sync');
    expect(await cache.collapse('acme', 'a:1', async () => 'again').result).toBe('again');
  });
});

describe('createResponseCache: expired rows on disk', () => {
  it('are all purged by one sweep, however many expired since the last (in batches)', async () => {
    // The load soak's database grew by ~2.5 MiB a minute: a sweep purged 500 expired rows a minute
    // at most, while ~40 entries a second were written, so expired rows piled up without end.
    const { db, store } = sqliteStore();
    const clock = manualClock();
    const cache = createResponseCache({
      store,
      clock,
      maxItems: 10,
      maxBytes: 1024 * 1024,
      ttlMs: TTL,
      onError: rethrow,
    });
    for (let i = 0; i < 1_800; i++) await cache.set('acme', `analyst:${i}`, answer(`a${i}`));
    const rows = db.prepare('SELECT COUNT(*) FROM cache_entries').pluck();
    expect(rows.get()).toBe(1_800);
    clock.advance(TTL + 61_000);
    // The next write starts a sweep; it runs batch after batch off that write's path.
    await cache.set('acme', 'analyst:fresh', answer('fresh'));
    for (let i = 0; i < 200 && (rows.get() as number) > 1; i++) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(rows.get()).toBe(1);
  });
});
