import type pg from 'pg';
import type { CacheStore } from '../../src/domain/cache.js';
import { createPostgresCacheStore } from '../../src/store/postgres/cache.js';
import { openPostgresPool } from '../../src/store/postgres/pool.js';
import { createSqliteCacheStore } from '../../src/store/sqlite/cache.repo.js';
import { openDatabase } from '../../src/store/sqlite/db.js';
import { createGroupCommitter } from '../../src/store/sqlite/group-commit.js';
import { migratedPostgresDatabase } from '../support/postgres-database.js';

/** The persistent cache tiers the contract specs run against, each opened empty per test. */
export interface OpenedCacheStore {
  store: CacheStore;
  /** Another instance's tier over the same table (a second pool on PostgreSQL). */
  peer(): CacheStore;
  /** Overwrites a row's stored value, as an older build or a hand edit would leave it. */
  corrupt(tenantId: string, key: string, value: string): Promise<void>;
  close(): Promise<void>;
}

export const CACHE_STORE_ADAPTERS: Array<{ name: 'sqlite' | 'postgres'; open(): Promise<OpenedCacheStore> }> = [
  {
    name: 'sqlite',
    open: async () => {
      const db = openDatabase(':memory:', { synchronous: 'NORMAL' });
      const store = createSqliteCacheStore(db, createGroupCommitter(db));
      return {
        store,
        peer: () => createSqliteCacheStore(db, createGroupCommitter(db)),
        corrupt: async (tenantId, key, value) => {
          db.prepare('UPDATE cache_entries SET value = ? WHERE tenant_id = ? AND key = ?').run(value, tenantId, key);
        },
        close: async () => {
          db.close();
        },
      };
    },
  },
  {
    name: 'postgres',
    open: async () => {
      const { url } = await migratedPostgresDatabase();
      const pools: pg.Pool[] = [];
      const openPool = () => {
        const pool = openPostgresPool({ connectionString: url, max: 4 });
        pools.push(pool);
        return pool;
      };
      const pool = openPool();
      await pool.query('TRUNCATE cache_entries');
      return {
        store: createPostgresCacheStore(pool),
        peer: () => createPostgresCacheStore(openPool()),
        corrupt: async (tenantId, key, value) => {
          await pool.query('UPDATE cache_entries SET value = $1 WHERE tenant_id = $2 AND key = $3', [
            value,
            tenantId,
            key,
          ]);
        },
        close: async () => {
          await Promise.all(pools.map((p) => p.end()));
        },
      };
    },
  },
];
