import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';

/**
 * Applies the PostgreSQL migrations (migrations/postgres/NNNN_name.sql), forward only, each in its
 * own transaction with its row in `schema_migrations`. N instances booting together take one
 * session-level advisory lock first, so exactly one applies each migration and the others find
 * it applied. A database migrated by a newer build (a version this build does not have) is
 * refused rather than run against a schema it does not know.
 */
const MIGRATIONS_DIR = fileURLToPath(new URL('../../../migrations/postgres/', import.meta.url));
const MIGRATION_FILE = /^(\d{4})_[A-Za-z0-9_-]+\.sql$/;
/** The advisory lock key: "baton" + "mig" as bytes, so it stays clear of other applications' keys. */
const MIGRATION_LOCK = 0x626174_6f6e6d69n;

export interface PostgresMigration {
  version: number;
  file: string;
}

export function postgresMigrations(dir = MIGRATIONS_DIR): PostgresMigration[] {
  const migrations: PostgresMigration[] = [];
  for (const file of readdirSync(dir)) {
    const match = MIGRATION_FILE.exec(file);
    if (!match) continue;
    migrations.push({ version: Number(match[1]), file });
  }
  migrations.sort((a, b) => a.version - b.version);
  for (let i = 1; i < migrations.length; i++) {
    const previous = migrations[i - 1] as PostgresMigration;
    const current = migrations[i] as PostgresMigration;
    if (previous.version === current.version) {
      throw new Error(`Two migrations share version ${current.version}: ${previous.file}, ${current.file}`);
    }
  }
  return migrations;
}

/** Brings the database up to this build's schema; returns the versions this call applied. */
export async function migratePostgres(pool: pg.Pool, dir = MIGRATIONS_DIR): Promise<number[]> {
  const migrations = postgresMigrations(dir);
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK.toString()]);
    try {
      await client.query(
        `CREATE TABLE IF NOT EXISTS schema_migrations (
           version    INTEGER PRIMARY KEY,
           file       TEXT NOT NULL,
           applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
         )`,
      );
      const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations');
      const applied = new Set(rows.map((r) => r.version));
      const known = new Set(migrations.map((m) => m.version));
      const unknown = [...applied].filter((v) => !known.has(v)).sort((a, b) => a - b);
      if (unknown.length > 0) {
        throw new Error(
          `the database has migrations this build does not know (${unknown.join(', ')}): it was migrated by a newer baton`,
        );
      }
      const done: number[] = [];
      for (const migration of migrations) {
        if (applied.has(migration.version)) continue;
        const sql = readFileSync(join(dir, migration.file), 'utf8');
        await client.query('BEGIN');
        try {
          await client.query(sql);
          await client.query('INSERT INTO schema_migrations (version, file) VALUES ($1, $2)', [
            migration.version,
            migration.file,
          ]);
          await client.query('COMMIT');
        } catch (error) {
          await client.query('ROLLBACK');
          throw new Error(`migration ${migration.file} failed: ${(error as Error).message}`, { cause: error });
        }
        done.push(migration.version);
      }
      return done;
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK.toString()]);
    }
  } finally {
    client.release();
  }
}
