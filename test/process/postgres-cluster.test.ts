import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { freshPostgresDatabase } from '../support/postgres-database.js';

/**
 * The PostgreSQL the suites run against: the run's throwaway cluster (a real PostgreSQL 15 server,
 * started by vitest's global setup) listens on loopback only, runs unprivileged, and hands each
 * caller a database of its own, so no two test files see each other's rows.
 */
const dropped: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const drop of dropped) await drop();
});

async function query<T extends pg.QueryResultRow>(url: string, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

describe('the throwaway PostgreSQL cluster', () => {
  it('is PostgreSQL 15 or newer on 127.0.0.1 only, run by an unprivileged role', async () => {
    const db = await freshPostgresDatabase();
    dropped.push(db.drop);
    const [version] = await query<{ server_version_num: string }>(db.url, 'SHOW server_version_num');
    expect(Number(version?.server_version_num)).toBeGreaterThanOrEqual(150_000);
    const [listen] = await query<{ listen_addresses: string }>(db.url, 'SHOW listen_addresses');
    expect(listen?.listen_addresses).toBe('127.0.0.1');
    expect(new URL(db.url).hostname).toBe('127.0.0.1');
    const [user] = await query<{ current_user: string }>(db.url, 'SELECT current_user');
    expect(user?.current_user).not.toBe('root');
  });

  it('gives each caller its own database: a table in one is absent from the other', async () => {
    const a = await freshPostgresDatabase();
    const b = await freshPostgresDatabase();
    dropped.push(a.drop, b.drop);
    expect(a.name).not.toBe(b.name);
    await query(a.url, 'CREATE TABLE only_in_a (id int)');
    const inA = await query<{ n: string }>(a.url, "SELECT count(*) AS n FROM pg_tables WHERE tablename = 'only_in_a'");
    const inB = await query<{ n: string }>(b.url, "SELECT count(*) AS n FROM pg_tables WHERE tablename = 'only_in_a'");
    expect(inA[0]?.n).toBe('1');
    expect(inB[0]?.n).toBe('0');
  });

  it('drops a database with its connections still open', async () => {
    const db = await freshPostgresDatabase();
    const open = new pg.Client({ connectionString: db.url });
    await open.connect();
    open.on('error', () => {});
    await db.drop();
    const left = await query<{ n: string }>(
      new URL('/postgres', db.url).toString(),
      `SELECT count(*) AS n FROM pg_database WHERE datname = '${db.name}'`,
    );
    expect(left[0]?.n).toBe('0');
    await open.end().catch(() => {});
  });
});
