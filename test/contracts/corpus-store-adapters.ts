import type pg from 'pg';
import { afterAll } from 'vitest';
import type { CorpusStore } from '../../src/domain/ports.js';
import { createPostgresCorpusStore } from '../../src/store/postgres/corpora.js';
import { migratePostgres } from '../../src/store/postgres/migrate.js';
import { openPostgresPool } from '../../src/store/postgres/pool.js';
import { createSqliteCorpusStore } from '../../src/store/sqlite/corpora.repo.js';
import { type Db, openDatabase } from '../../src/store/sqlite/db.js';
import { createGroupCommitter } from '../../src/store/sqlite/group-commit.js';
import { freshPostgresDatabase } from '../support/postgres-database.js';

/**
 * The CorpusStore adapters the contract specs run against, each opened fresh per test: SQLite in
 * memory (searched in-thread), and PostgreSQL on a database of this file's own (emptied per test).
 */
export interface OpenedCorpusStore {
  store: CorpusStore;
  /** Another instance's store over the same database (a second pool on PostgreSQL). */
  peer(): Promise<CorpusStore>;
  /** Rows the corpora's documents, chunks and pending purges hold, whatever corpus they belong to. */
  rows(): Promise<{ documents: number; chunks: number; purges: number }>;
  /** Stops the store's background purge, as a shutdown does. */
  stop(): Promise<void>;
  /** A store created again over the same database, as at the next start. */
  restart(): Promise<CorpusStore>;
  close(): Promise<void>;
}

const NOW = () => 1_700_000_000_000;
const rethrow = (err: unknown) => {
  throw err;
};

function openSqlite(): OpenedCorpusStore {
  const db: Db = openDatabase(':memory:', { synchronous: 'NORMAL' });
  const stores: Array<ReturnType<typeof createSqliteCorpusStore>> = [];
  let closed = false;
  // A background commit queued before the close fails on the closed database: that one is expected.
  const onError = (err: unknown) => {
    if (!closed) rethrow(err);
  };
  const make = () => {
    const made = createSqliteCorpusStore(db, createGroupCommitter(db), { now: NOW, onError });
    stores.push(made);
    return made;
  };
  const store = make();
  const count = (table: string) => db.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number;
  return {
    store,
    peer: async () => make(),
    rows: async () => ({
      documents: count('corpus_documents'),
      chunks: count('corpus_chunks'),
      purges: count('corpus_purges'),
    }),
    stop: async () => store.stop(),
    restart: async () => make(),
    close: async () => {
      closed = true;
      for (const made of stores) made.stop();
      await Promise.all(stores.map((made) => made.close()));
      db.close();
    },
  };
}

let postgres: Promise<{ url: string; drop(): Promise<void> }> | undefined;
afterAll(async () => {
  if (postgres !== undefined) await (await postgres).drop();
});

async function openPostgres(): Promise<OpenedCorpusStore> {
  postgres ??= freshPostgresDatabase().then(async (db) => {
    const pool = openPostgresPool({ connectionString: db.url, max: 2 });
    await migratePostgres(pool);
    await pool.end();
    return db;
  });
  const { url } = await postgres;
  const pools: pg.Pool[] = [];
  const stores: Array<ReturnType<typeof createPostgresCorpusStore>> = [];
  const make = (pool: pg.Pool) => {
    const made = createPostgresCorpusStore(pool, { now: NOW, onError: rethrow });
    stores.push(made);
    return made;
  };
  const openPool = () => {
    const pool = openPostgresPool({ connectionString: url, max: 4 });
    pools.push(pool);
    return pool;
  };
  const pool = openPool();
  await pool.query('TRUNCATE corpora, corpus_documents, corpus_chunks, corpus_terms, corpus_purges');
  const store = make(pool);
  const count = async (table: string) =>
    (await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).rows[0]?.n ?? 0;
  return {
    store,
    peer: async () => make(openPool()),
    rows: async () => ({
      documents: await count('corpus_documents'),
      chunks: await count('corpus_chunks'),
      purges: await count('corpus_purges'),
    }),
    stop: () => store.stop(),
    restart: async () => make(pool),
    close: async () => {
      await Promise.all(stores.map((made) => made.stop()));
      await Promise.all(pools.map((p) => p.end()));
    },
  };
}

export const CORPUS_STORE_ADAPTERS: Array<{ name: 'sqlite' | 'postgres'; open(): Promise<OpenedCorpusStore> }> = [
  { name: 'sqlite', open: async () => openSqlite() },
  { name: 'postgres', open: openPostgres },
];
