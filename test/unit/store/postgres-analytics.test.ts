import { afterAll, beforeAll, expect, it } from 'vitest';
import { migratePostgres } from '../../../src/store/postgres/migrate.js';
import { openPostgresPool } from '../../../src/store/postgres/pool.js';
import { inTransaction } from '../../../src/store/postgres/transaction.js';
import { createPostgresUsageAnalyticsStore, foldSweptUsage } from '../../../src/store/postgres/usage-analytics.js';
import { freshPostgresDatabase } from '../../support/postgres-database.js';

/**
 * PostgreSQL-only properties of the analytics (their answers are the contract suites'): a report
 * runs its statements on one connection of the pool, never one per statement, since the engine's
 * commits share the pool and a burst of dashboards must not take all of it; sweeps folding the
 * same hour at once add up instead of overwriting each other.
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

it('adds up two sweeps folding the same hour at once, neither overwriting the other', async () => {
  const pool = openPostgresPool({ connectionString: url, max: 4 });
  cleanups.push(() => pool.end());
  const at = Date.UTC(2026, 1, 3, 10, 20);
  const ids = ['wf_fold_1', 'wf_fold_2', 'wf_fold_3', 'wf_fold_4'];
  for (const [i, id] of ids.entries()) {
    await pool.query(
      `INSERT INTO workflows (id, tenant_id, name, status, root_workflow_id, trace_id, definition, created_at)
       VALUES ($1, 'acme', 'w', 'completed', $1, 't', '{}', $2)`,
      [id, at],
    );
    await pool.query(
      `INSERT INTO efficiency (workflow_id, tenant_id, task_type, complexity, outcome, created_at, record, efficiency_score)
       VALUES ($1, 'acme', 'review', 'simple', 'success', $2, $3, 0.5)`,
      [id, at + i, JSON.stringify({ metrics: { agents_spawned: 1, by_model: { 'sim/haiku': { calls: 1 } } } })],
    );
  }
  await Promise.all(ids.map((id) => inTransaction(pool, (tx) => foldSweptUsage(tx, [id]))));
  await pool.query('DELETE FROM efficiency WHERE workflow_id = ANY($1::text[])', [ids]);
  const usage = createPostgresUsageAnalyticsStore(pool);
  const day = { from: Date.UTC(2026, 1, 3), to: Date.UTC(2026, 1, 4) };
  const dashboard = await usage.dashboard('acme', day);
  expect(dashboard).toMatchObject({ tasks: 4, successes: 4, agentsSpawned: 4 });
  expect(dashboard.efficiencyScore).toBeCloseTo(2, 12);
  expect((await usage.models('acme', day)).map((m) => [m.model, m.tasks, m.calls])).toEqual([['sim/haiku', 4, 4]]);
  const hour = { from: Date.UTC(2026, 1, 3, 10), to: Date.UTC(2026, 1, 3, 11) };
  expect((await usage.dashboard('acme', hour)).tasks).toBe(4);
  // Partial hours are read from live rows only, as SQLite reads its raw edges.
  expect((await usage.dashboard('acme', { from: at - 1, to: at + 10 })).tasks).toBe(0);
  expect((await usage.dashboard('globex', day)).tasks).toBe(0);
});
