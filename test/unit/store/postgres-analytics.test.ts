import { afterAll, beforeAll, expect, it } from 'vitest';
import { migratePostgres } from '../../../src/store/postgres/migrate.js';
import { openPostgresPool } from '../../../src/store/postgres/pool.js';
import { createPostgresUsageAnalyticsStore } from '../../../src/store/postgres/usage-analytics.js';
import { freshPostgresDatabase } from '../../support/postgres-database.js';

/**
 * PostgreSQL-only properties of the analytics reads (their answers are the contract suites'): a
 * report runs its statements on one connection of the pool, never one per statement, since the
 * engine's commits share the pool and a burst of dashboards must not take all of it.
 */
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

let url: string;
beforeAll(async () => {
  const db = await freshPostgresDatabase();
  cleanups.push(db.drop);
  url = db.url;
  const pool = openPostgresPool({ connectionString: url, max: 2 });
  await migratePostgres(pool);
  await pool.end();
});

it('runs each report on one connection', async () => {
  const pool = openPostgresPool({ connectionString: url, max: 10 });
  cleanups.push(() => pool.end());
  const usage = createPostgresUsageAnalyticsStore(pool);
  const window = { from: Date.UTC(2026, 0, 1, 0, 30), to: Date.UTC(2026, 0, 9, 5, 15) };
  await usage.dashboard('acme', window);
  await usage.models('acme', window);
  await usage.toolCalls('acme', window);
  expect(pool.totalCount).toBe(1);
});
