import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, inject } from 'vitest';

/**
 * A database of its own on the run's throwaway cluster (postgres-global-setup.ts): test files
 * never share one. `drop()` removes it (and ends its connections).
 */
export async function freshPostgresDatabase(): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  const maintenance = inject('postgresUrl');
  if (!maintenance)
    throw new Error('no PostgreSQL cluster: vitest.config.ts must run test/support/postgres-global-setup.ts');
  const name = `t_${randomBytes(6).toString('hex')}`;
  await withClient(maintenance, (client) => client.query(`CREATE DATABASE ${name}`));
  const url = new URL(maintenance);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    drop: () =>
      withClient(maintenance, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => {}),
  };
}

async function withClient<T>(url: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}

let migrated: Promise<{ url: string; drop(): Promise<void> }> | undefined;

/**
 * One migrated database for the whole test file that calls it (vitest loads support modules once
 * per file), dropped after the file: for contract specs that empty its tables per case instead of
 * paying a CREATE DATABASE each.
 */
export function migratedPostgresDatabase(): Promise<{ url: string }> {
  if (migrated === undefined) {
    migrated = freshPostgresDatabase().then(async (db) => {
      const pool = new pg.Pool({ connectionString: db.url, max: 1 });
      try {
        const { migratePostgres } = await import('../../src/store/postgres/migrate.js');
        await migratePostgres(pool);
      } finally {
        await pool.end();
      }
      return db;
    });
    afterAll(async () => {
      await (await migrated)?.drop();
    });
  }
  return migrated;
}
