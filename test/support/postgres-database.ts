import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';

/**
 * A database of its own on the run's throwaway cluster (postgres-global-setup.ts): test files
 * never share one. `drop()` removes it (and ends its connections).
 */
export async function freshPostgresDatabase(): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  const maintenance = maintenanceUrl();
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
      withClient(maintenance, async (client) => {
        // Pools ended just before may still be closing their sockets: a FORCE drop would terminate
        // them, and pg reports that termination as an error event no one listens to any more.
        // Give them a moment (bounded) to go on their own first.
        for (let i = 0; i < 100; i++) {
          const { rows } = await client.query<{ n: string }>(
            'SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1',
            [name],
          );
          if (Number(rows[0]?.n) === 0) break;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      }),
  };
}

/** One client on `url` for `use`, ended after it. */
export async function withClient<T>(url: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
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
 * per file): for contract specs that empty its tables per case instead of paying a CREATE DATABASE
 * each. Dropped by `dropMigratedPostgresDatabase`, which the file registers with `afterAll` when it
 * is collected (a hook cannot be added once its cases run).
 */
export function migratedPostgresDatabase(): Promise<{ url: string }> {
  migrated ??= freshPostgresDatabase().then(async (db) => {
    const pool = new pg.Pool({ connectionString: db.url, max: 1 });
    try {
      const { migratePostgres } = await import('../../src/store/postgres/migrate.js');
      await migratePostgres(pool);
    } finally {
      await pool.end();
    }
    return db;
  });
  return migrated;
}

export async function dropMigratedPostgresDatabase(): Promise<void> {
  const db = migrated;
  migrated = undefined;
  if (db !== undefined) await (await db).drop();
}

/** The run's cluster: provided to test files, inherited through the environment by threads they start. */
function maintenanceUrl(): string | undefined {
  try {
    return inject('postgresUrl') ?? process.env.BATON_TEST_POSTGRES_URL;
  } catch {
    return process.env.BATON_TEST_POSTGRES_URL;
  }
}
