import Database from 'better-sqlite3';
import pg from 'pg';
import { freshPostgresDatabase } from './postgres-database.js';

/**
 * The database a process suite runs the real server on, either kind: the environment that points
 * the server at it, and read-only SQL the suite checks the stored rows with (the same SQL on both:
 * the journal's `events` and `spans` views exist on both). SQLite reads open the file read-only, so
 * they also work while a server writes it; PostgreSQL reads use a small pool of their own.
 */
export interface DatabaseUnderTest {
  kind: 'sqlite' | 'postgres';
  /** DATABASE_PATH or DATABASE_URL, for startServer's `env`. */
  env: Record<string, string>;
  /** The count a query returns (`SELECT count(*) …`). */
  count(sql: string): Promise<number>;
  /** Prompt nodes by identity: "<tag> <node>", the tag being the workflow's `input.tag`. */
  promptNodes(): Promise<Map<string, { status: string; attempts: number }>>;
  close(): Promise<void>;
}

export const DATABASE_KINDS = ['sqlite', 'postgres'] as const;

export async function databaseUnderTest(
  kind: DatabaseUnderTest['kind'],
  sqlitePath: string,
): Promise<DatabaseUnderTest> {
  return kind === 'sqlite' ? sqliteUnderTest(sqlitePath) : postgresUnderTest();
}

function sqliteUnderTest(path: string): DatabaseUnderTest {
  const read = <T>(use: (db: Database.Database) => T): T => {
    const db = new Database(path, { readonly: true, fileMustExist: true });
    try {
      return use(db);
    } finally {
      db.close();
    }
  };
  return {
    kind: 'sqlite',
    env: { DATABASE_PATH: path },
    count: async (sql) => read((db) => Number(db.prepare(sql).pluck().get())),
    promptNodes: async () => {
      const rows = read((db) =>
        db
          .prepare(
            `SELECT json_extract(w.definition, '$.input.tag') || ' ' || n.name AS identity, n.status, n.attempts
               FROM nodes n JOIN workflows w ON w.id = n.workflow_id WHERE n.type = 'prompt'`,
          )
          .all(),
      ) as Array<{ identity: string; status: string; attempts: number }>;
      return new Map(rows.map((r) => [r.identity, { status: r.status, attempts: r.attempts }]));
    },
    close: async () => {},
  };
}

async function postgresUnderTest(): Promise<DatabaseUnderTest> {
  const db = await freshPostgresDatabase();
  const pool = new pg.Pool({ connectionString: db.url, max: 2 });
  return {
    kind: 'postgres',
    env: { DATABASE_URL: db.url },
    count: async (sql) => {
      const { rows } = await pool.query(sql);
      return Number(Object.values(rows[0] ?? {})[0]);
    },
    promptNodes: async () => {
      const { rows } = await pool.query<{ identity: string; status: string; attempts: number }>(
        `SELECT (w.definition::json -> 'input' ->> 'tag') || ' ' || n.name AS identity, n.status, n.attempts
           FROM nodes n JOIN workflows w ON w.id = n.workflow_id WHERE n.type = 'prompt'`,
      );
      return new Map(rows.map((r) => [r.identity, { status: r.status, attempts: r.attempts }]));
    },
    close: async () => {
      await pool.end();
      await db.drop();
    },
  };
}
