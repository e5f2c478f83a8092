import type pg from 'pg';
import type { ApiKeyStore } from '../../src/domain/ports.js';
import { createPostgresApiKeyStore } from '../../src/store/postgres/api-keys.js';
import { openPostgresPool } from '../../src/store/postgres/pool.js';
import { createSqliteApiKeyStore } from '../../src/store/sqlite/api-keys.repo.js';
import { openDatabase } from '../../src/store/sqlite/db.js';
import { createGroupCommitter } from '../../src/store/sqlite/group-commit.js';
import { migratedPostgresDatabase } from '../support/postgres-database.js';

export interface StoredKey {
  tenantId: string;
  keyHash: string;
  createdAt: number;
}

/** The ApiKeyStore adapters the contract specs run against, each opened empty per test. */
export interface OpenedApiKeyStore {
  keys: ApiKeyStore;
  /** Another instance's store over the same table (its own pool on PostgreSQL). */
  peer(): ApiKeyStore;
  /** The table, by tenant then hash (the store only writes; auth compares configured keys). */
  stored(): Promise<StoredKey[]>;
  /** Backdates a key's created_at. */
  backdate(keyHash: string, createdAt: number): Promise<void>;
  close(): Promise<void>;
}

const ORDERED = 'SELECT tenant_id, key_hash, created_at FROM api_keys ORDER BY tenant_id, key_hash';
type Row = { tenant_id: string; key_hash: string; created_at: number };
const toStored = (r: Row): StoredKey => ({ tenantId: r.tenant_id, keyHash: r.key_hash, createdAt: r.created_at });

export const API_KEY_STORE_ADAPTERS: Array<{ name: 'sqlite' | 'postgres'; open(): Promise<OpenedApiKeyStore> }> = [
  {
    name: 'sqlite',
    open: async () => {
      const db = openDatabase(':memory:', { synchronous: 'NORMAL' });
      return {
        keys: createSqliteApiKeyStore(db, createGroupCommitter(db)),
        peer: () => createSqliteApiKeyStore(db, createGroupCommitter(db)),
        stored: async () => (db.prepare(ORDERED).all() as Row[]).map(toStored),
        backdate: async (keyHash, createdAt) => {
          db.prepare('UPDATE api_keys SET created_at = ? WHERE key_hash = ?').run(createdAt, keyHash);
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
        const pool = openPostgresPool({ connectionString: url, max: 2 });
        pools.push(pool);
        return pool;
      };
      const pool = openPool();
      await pool.query('TRUNCATE api_keys');
      return {
        keys: createPostgresApiKeyStore(pool),
        peer: () => createPostgresApiKeyStore(openPool()),
        stored: async () => (await pool.query<Row>(ORDERED)).rows.map(toStored),
        backdate: async (keyHash, createdAt) => {
          await pool.query('UPDATE api_keys SET created_at = $1 WHERE key_hash = $2', [createdAt, keyHash]);
        },
        close: async () => {
          await Promise.all(pools.map((p) => p.end()));
        },
      };
    },
  },
];
