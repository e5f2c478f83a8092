import type pg from 'pg';
import { afterAll } from 'vitest';
import { createPostgresCommitter, type PostgresCommitter } from '../../src/store/postgres/group-commit.js';
import { migratePostgres } from '../../src/store/postgres/migrate.js';
import { openPostgresPool } from '../../src/store/postgres/pool.js';
import { freshPostgresDatabase } from './postgres-database.js';

/**
 * One migrated PostgreSQL database for a test file (its own, on the run's throwaway cluster),
 * emptied before each case instead of created anew: `CREATE DATABASE` and the migrations cost a
 * few hundred milliseconds, a TRUNCATE a few. Dropped when the file ends.
 */
export interface PostgresFixture {
  pool: pg.Pool;
  committer: PostgresCommitter;
}

let opened: Promise<{ pool: pg.Pool; tables: string[] }> | undefined;

afterAll(async () => {
  if (!opened) return;
  const { pool } = await opened;
  opened = undefined;
  await pool.end();
  await dropDatabase?.();
});
let dropDatabase: (() => Promise<void>) | undefined;

async function database(): Promise<{ pool: pg.Pool; tables: string[] }> {
  opened ??= (async () => {
    const db = await freshPostgresDatabase();
    dropDatabase = db.drop;
    const pool = openPostgresPool({ connectionString: db.url, max: 8 });
    await migratePostgres(pool);
    const { rows } = await pool.query<{ tablename: string }>(
      "SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'schema_migrations'",
    );
    return { pool, tables: rows.map((r) => r.tablename) };
  })();
  return opened;
}

/** The file's database, empty, with a fresh group committer. */
export async function emptyPostgresStore(): Promise<PostgresFixture> {
  const { pool, tables } = await database();
  await pool.query(`TRUNCATE ${tables.join(', ')} RESTART IDENTITY CASCADE`);
  return { pool, committer: createPostgresCommitter(pool) };
}
