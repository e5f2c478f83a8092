import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';

export type Db = Database.Database;
export type SynchronousMode = 'NORMAL' | 'FULL';

export interface OpenDatabaseOptions {
  synchronous: SynchronousMode;
}

/** What `PRAGMA synchronous` reads back as (SQLite reports the level as a number). */
const SYNCHRONOUS_LEVEL: Record<SynchronousMode, number> = { NORMAL: 1, FULL: 2 };

/**
 * The WAL file is cut back to this size whenever SQLite restarts it (the first commit after a
 * complete checkpoint, checkpointer.ts): without it the file kept its largest size forever (467 MB
 * after one burst). The checkpointer holds commits for a catch-up once the file grows past it, so
 * the file stays near this size under any load; forcing a TRUNCATE checkpoint from the worker then held the writer lock past
 * BUSY_TIMEOUT_MS and failed commits ("database is locked"), so it is not done.
 */
export const WAL_SIZE_LIMIT_BYTES = 32 * 1024 * 1024;

/** Short: the service is the only writer, so waiting long on a lock only hides a bug (docs/design.md#storage). */
const BUSY_TIMEOUT_MS = 100;

const MIGRATIONS_DIR = fileURLToPath(new URL('../../../migrations/sqlite/', import.meta.url));
const MIGRATION_FILE = /^(\d{4})_[A-Za-z0-9_-]+\.sql$/;

interface Migration {
  version: number;
  file: string;
}

function isInMemory(path: string): boolean {
  return path === ':memory:' || path === '';
}

/**
 * Opens (creating when needed) the database, sets and verifies the pragmas of docs/design.md#storage and
 * applies pending migrations. Throws when a pragma does not take or the schema is newer than
 * this build.
 */
export function openDatabase(path: string, options: OpenDatabaseOptions): Db {
  if (!isInMemory(path)) mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path, { timeout: BUSY_TIMEOUT_MS });
  try {
    configure(db, path, options);
    migrate(db);
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}

function configure(db: Db, path: string, options: OpenDatabaseOptions): void {
  // First: a new file takes it only before anything (journal_mode included) writes its header.
  enableIncrementalVacuum(db);
  if (!isInMemory(path)) {
    const mode = db.pragma('journal_mode = WAL', { simple: true });
    if (mode !== 'wal') throw new Error(`SQLite refused journal_mode=WAL (got ${String(mode)}) for ${path}`);
  }

  const wanted = SYNCHRONOUS_LEVEL[options.synchronous];
  db.pragma(`synchronous = ${options.synchronous}`);
  const synchronous = db.pragma('synchronous', { simple: true });
  if (synchronous !== wanted) {
    throw new Error(`SQLite did not apply synchronous=${options.synchronous} (reads back ${String(synchronous)})`);
  }

  db.pragma('foreign_keys = ON');
  if (db.pragma('foreign_keys', { simple: true }) !== 1) throw new Error('SQLite did not apply foreign_keys=ON');

  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
}

/**
 * auto_vacuum = INCREMENTAL lets the retention sweep (retention.repo.ts) give freed pages back to
 * the file system. A new database takes it before the migrations create the first table; a
 * database made before it needs one VACUUM (a full rewrite, once, at the first start after the
 * upgrade: it takes time proportional to the file's size). A migration cannot do it: VACUUM cannot
 * run inside the migration's transaction.
 */
function enableIncrementalVacuum(db: Db): void {
  const INCREMENTAL = 2;
  if (db.pragma('auto_vacuum', { simple: true }) === INCREMENTAL) return;
  db.pragma('auto_vacuum = INCREMENTAL');
  const tables = db.prepare('SELECT count(*) FROM sqlite_schema').pluck().get() as number;
  if (tables > 0) db.exec('VACUUM');
  const mode = db.pragma('auto_vacuum', { simple: true });
  if (mode !== INCREMENTAL)
    throw new Error(`SQLite did not apply auto_vacuum=INCREMENTAL (reads back ${String(mode)})`);
}

function readMigrations(): Migration[] {
  const migrations: Migration[] = [];
  for (const file of readdirSync(MIGRATIONS_DIR)) {
    const match = MIGRATION_FILE.exec(file);
    if (match?.[1] === undefined) continue;
    migrations.push({ version: Number(match[1]), file });
  }
  migrations.sort((a, b) => a.version - b.version);
  for (let i = 1; i < migrations.length; i++) {
    const previous = migrations[i - 1];
    const current = migrations[i];
    if (previous !== undefined && current !== undefined && previous.version === current.version) {
      throw new Error(`Two migrations share version ${current.version}: ${previous.file}, ${current.file}`);
    }
  }
  return migrations;
}

/** Forward-only: each pending file and its `user_version` bump commit together, or not at all. */
function migrate(db: Db): void {
  const migrations = readMigrations();
  const current = db.pragma('user_version', { simple: true }) as number;
  const newest = migrations.at(-1)?.version ?? 0;
  if (current > newest) {
    throw new Error(`Database schema version ${current} is newer than this build knows (${newest}); refusing to open`);
  }

  const apply = db.transaction((migration: Migration) => {
    db.exec(readFileSync(join(MIGRATIONS_DIR, migration.file), 'utf8'));
    db.pragma(`user_version = ${migration.version}`);
  });
  for (const migration of migrations) {
    if (migration.version > current) apply.immediate(migration);
  }
}
