import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { migratePostgres, postgresMigrations } from '../../../src/store/postgres/migrate.js';
import { openPostgresPool } from '../../../src/store/postgres/pool.js';
import { openDatabase } from '../../../src/store/sqlite/db.js';
import { freshPostgresDatabase } from '../../support/postgres-database.js';

/**
 * The PostgreSQL migrations on a real server (the run's throwaway cluster, a database per case):
 * applied once each even when several instances boot together, never again, rolled back whole when
 * one fails, refused on a database a newer build migrated; and every table they create has the
 * columns of the SQLite table of the same name, so one row mapping serves both stores — plus the
 * few only PostgreSQL has (POSTGRES_ONLY: the run leases several instances need; the BM25 statistics
 * SQLite's FTS5 tables keep for it and PostgreSQL has no index for: store/postgres/corpus-search.ts).
 */
const POSTGRES_ONLY: Record<string, string[]> = {
  workflows: ['lease_owner', 'lease_epoch', 'lease_until', 'parked'],
  // Total tokens of a corpus's chunks (BM25's average length); FTS5 keeps it in its own table.
  corpora: ['tokens'],
  // A chunk's length in tokens, its terms and their counts; FTS5 keeps them in its index.
  corpus_chunks: ['tokens', 'term_ids', 'term_counts'],
};
/** Tables only PostgreSQL has, with why. */
const POSTGRES_ONLY_TABLES: Record<string, string> = {
  corpus_terms: "per corpus and term, the chunks that hold it (BM25's document frequency; FTS5's index counts it)",
  // SQLite's roll-ups keep swept trees' sums; PostgreSQL reads live rows and these (usage-analytics.ts).
  usage_swept: 'the dashboard sums of trees the retention sweep deleted',
};
const cleanups: Array<() => Promise<void> | void> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function freshPool(): Promise<pg.Pool> {
  const db = await freshPostgresDatabase();
  const pool = openPostgresPool({ connectionString: db.url, max: 4 });
  cleanups.push(db.drop, () => pool.end());
  return pool;
}

const tablesOf = async (pool: pg.Pool) =>
  (
    await pool.query<{ tablename: string }>(
      "SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'schema_migrations' ORDER BY 1",
    )
  ).rows.map((r) => r.tablename);

describe('PostgreSQL migrations', () => {
  it('apply every migration on a fresh database, and nothing on the next boot', async () => {
    const pool = await freshPool();
    const all = postgresMigrations().map((m) => m.version);
    expect(all.length).toBeGreaterThan(0);
    expect(await migratePostgres(pool)).toEqual(all);
    expect(await migratePostgres(pool)).toEqual([]);
    const recorded = await pool.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
    expect(recorded.rows.map((r) => r.version)).toEqual(all);
    expect(await tablesOf(pool)).toEqual(expect.arrayContaining(['idempotency_keys', 'nodes', 'workflows']));
  });

  it('are applied once when three instances boot together', async () => {
    const db = await freshPostgresDatabase();
    cleanups.push(db.drop);
    const pools = Array.from({ length: 3 }, () => openPostgresPool({ connectionString: db.url, max: 2 }));
    cleanups.push(() => Promise.all(pools.map((p) => p.end())).then(() => {}));
    const results = await Promise.all(pools.map((p) => migratePostgres(p)));
    const applied = results.flat().sort((a, b) => a - b);
    expect(applied).toEqual(postgresMigrations().map((m) => m.version));
  });

  it('roll a failing migration back whole and record nothing of it', async () => {
    const pool = await freshPool();
    const dir = mkdtempSync(join(tmpdir(), 'baton-pg-migrations-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, '0001_one.sql'), 'CREATE TABLE one (id int);');
    writeFileSync(join(dir, '0002_broken.sql'), 'CREATE TABLE two (id int);\nSELECT no_such_function();');
    await expect(migratePostgres(pool, dir)).rejects.toThrow(/0002_broken\.sql failed/);
    expect(await tablesOf(pool)).toEqual(['one']);
    const recorded = await pool.query<{ version: number }>('SELECT version FROM schema_migrations');
    expect(recorded.rows.map((r) => r.version)).toEqual([1]);
  });

  it('refuse a database migrated by a newer build', async () => {
    const pool = await freshPool();
    await migratePostgres(pool);
    await pool.query("INSERT INTO schema_migrations (version, file) VALUES (9999, '9999_future.sql')");
    await expect(migratePostgres(pool)).rejects.toThrow(/does not know \(9999\).*newer baton/);
  });

  it('create tables with the columns of the SQLite tables of the same names', async () => {
    const pool = await freshPool();
    await migratePostgres(pool);
    const sqlite = openDatabase(':memory:', { synchronous: 'NORMAL' });
    cleanups.push(() => {
      sqlite.close();
    });
    for (const table of await tablesOf(pool)) {
      if (POSTGRES_ONLY_TABLES[table] !== undefined) continue;
      const pgColumns = (
        await pool.query<{ column_name: string }>(
          "SELECT column_name FROM information_schema.columns WHERE table_schema = 'public' AND table_name = $1",
          [table],
        )
      ).rows
        .map((r) => r.column_name)
        .filter((c) => !POSTGRES_ONLY[table]?.includes(c));
      const sqliteColumns = (sqlite.prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string }>).map(
        (c) => c.name,
      );
      expect(sqliteColumns.length, `SQLite has a table ${table}`).toBeGreaterThan(0);
      expect(pgColumns.sort(), table).toEqual(sqliteColumns.sort());
    }
  });
});
