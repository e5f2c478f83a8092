import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { migratePostgres } from '../../../src/store/postgres/migrate.js';
import { openPostgresPool } from '../../../src/store/postgres/pool.js';
import { freshPostgresDatabase } from '../../support/postgres-database.js';

/**
 * A session keeps one plan per statement of a PL/pgSQL function, made while a table was small:
 * the group commit's node patch, planned over an empty `nodes` table, stayed a sequential scan
 * joined by hash as the table grew (measured over the 10-step job: 4 ms per patch at 11 000 nodes).
 * Here one session patches a node while the table is nearly empty, the table then grows (no
 * ANALYZE, autovacuum off for it: the plan stays cached), and the same session patches again: the
 * table's sequential scan count must not move.
 */
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

const PATCH = `SELECT baton_group_commit('', '{}', '{}', '{}', '{}', '[]', 0, $1, 1, NULL, '{}', '{}', NULL,
  '{}', '{}', '{}', '{}') AS lost`;

describe('PostgreSQL: the group commit keeps index plans', () => {
  it('patches a node by key after the nodes table grew under a plan made when it was empty', async () => {
    const db = await freshPostgresDatabase();
    cleanups.push(db.drop);
    const pool = openPostgresPool({ connectionString: db.url, max: 2 });
    cleanups.push(() => pool.end());
    await migratePostgres(pool);
    await pool.query('ALTER TABLE nodes SET (autovacuum_enabled = false, toast.autovacuum_enabled = false)');
    await pool.query(
      `INSERT INTO workflows (id, tenant_id, name, status, root_workflow_id, trace_id, definition, created_at)
       VALUES ('wf_plan', 't', 'w', 'running', 'wf_plan', 'tr', '{}', 0)`,
    );
    const insertNodes = (from: number, to: number) =>
      pool.query(
        `INSERT INTO nodes (id, workflow_id, tenant_id, name, type, position, depth, status, attempts)
         SELECT 'nd_' || lpad(i::text, 6, '0'), 'wf_plan', 't', 'n' || i, 'prompt', i, 1, 'idle', 0
           FROM generate_series($1::int, $2::int) AS i`,
        [from, to],
      );
    await insertNodes(1, 2);
    const session = new pg.Client(db.url);
    await session.connect();
    cleanups.push(() => session.end());
    const patch = (id: string, attempts: number) => session.query(PATCH, [JSON.stringify([{ id, m: 2, attempts }])]);
    const seqScans = async () => {
      await session.query('SELECT pg_stat_force_next_flush()');
      const { rows } = await session.query<{ n: string }>(
        "SELECT seq_scan AS n FROM pg_stat_user_tables WHERE relname = 'nodes'",
      );
      return Number(rows[0]?.n);
    };
    // Past the plan cache's five custom plans: the session now runs a generic plan of its own.
    for (let i = 1; i <= 8; i++) await patch('nd_000001', i);
    await insertNodes(3, 30_000);
    const before = await seqScans();
    for (let i = 1; i <= 3; i++) await patch('nd_020000', i);
    expect(await seqScans()).toBe(before);
    const { rows } = await pool.query<{ attempts: number }>("SELECT attempts FROM nodes WHERE id = 'nd_020000'");
    expect(rows[0]?.attempts).toBe(3);
  });

  /**
   * The claim ranks claimable roots by tenant. Its plan read every root ever run in tenant order
   * (workflows_roots_by_tenant, filtering out the finished ones): a claim cost grew with the
   * table's history. Here 20 000 finished roots surround 3 to claim: a claim may read the
   * unfinished roots' index entries, not the history's. Planned cold (the session's plan made over
   * an empty table) and planned on fresh statistics.
   */
  it.each([
    ['planned when the table was empty', false],
    ['planned on fresh statistics', true],
  ])('claims without reading the finished roots (%s)', async (_label, analyze) => {
    const db = await freshPostgresDatabase();
    cleanups.push(db.drop);
    const pool = openPostgresPool({ connectionString: db.url, max: 2 });
    cleanups.push(() => pool.end());
    await migratePostgres(pool);
    await pool.query('ALTER TABLE workflows SET (autovacuum_enabled = false, toast.autovacuum_enabled = false)');
    const insertRoots = (from: number, to: number, status: string, tenant: string) =>
      pool.query(
        `INSERT INTO workflows (id, tenant_id, name, status, root_workflow_id, trace_id, definition, created_at)
         SELECT 'wf_' || $3 || lpad(i::text, 6, '0'), $4, 'w', $3, 'wf_' || $3 || lpad(i::text, 6, '0'),
                'tr_' || $3 || i, '{}', i
           FROM generate_series($1::int, $2::int) AS i`,
        [from, to, status, tenant],
      );
    const session = new pg.Client(db.url);
    await session.connect();
    cleanups.push(() => session.end());
    const claim = () => session.query("SELECT ids FROM baton_claim('me', 10, 100, 15000)");
    // Past the plan cache's five custom plans, over an empty table.
    for (let i = 0; i < 8; i++) await claim();
    for (const [n, tenant] of [...Array(20).keys()].map((k) => [k, `t${k % 4}`] as const)) {
      await insertRoots(n * 1000 + 1, n * 1000 + 1000, 'completed', tenant);
    }
    await insertRoots(1, 3, 'idle', 't1');
    if (analyze) await session.query('ANALYZE workflows');
    const tuplesRead = async () => {
      await session.query('SELECT pg_stat_force_next_flush()');
      const { rows } = await session.query<{ n: string }>(
        `SELECT coalesce(sum(idx_tup_read), 0) + (SELECT coalesce(seq_tup_read, 0) FROM pg_stat_user_tables
                 WHERE relname = 'workflows') AS n
           FROM pg_stat_user_indexes WHERE relname = 'workflows'`,
      );
      return Number(rows[0]?.n);
    };
    const before = await tuplesRead();
    const { rows } = await claim();
    const read = (await tuplesRead()) - before;
    expect(rows[0]?.ids).toEqual(['wf_idle000001', 'wf_idle000002', 'wf_idle000003']);
    expect(read).toBeLessThan(100);
  });

  /**
   * The same over the workflows table, for every part of a group commit that looks a workflow up:
   * the workflow patch, the append check (which also proves each workflow exists) and the journal
   * rows. A plan made cold joined the batch's ids to a bitmap scan of a whole index by hash
   * (measured: 4.5 ms at 20 000 workflows, every commit); a sequential-scan count does not see that,
   * the tuples read do.
   */
  it('patches workflows and appends their events by key after the table grew under a cold plan', async () => {
    const db = await freshPostgresDatabase();
    cleanups.push(db.drop);
    const pool = openPostgresPool({ connectionString: db.url, max: 2 });
    cleanups.push(() => pool.end());
    await migratePostgres(pool);
    for (const table of ['workflows', 'journal']) {
      await pool.query(`ALTER TABLE ${table} SET (autovacuum_enabled = false, toast.autovacuum_enabled = false)`);
    }
    const insertRoots = (from: number, to: number) =>
      pool.query(
        `INSERT INTO workflows (id, tenant_id, name, status, root_workflow_id, trace_id, definition, created_at)
         SELECT 'wf_' || lpad(i::text, 6, '0'), 't', 'w', 'running', 'wf_' || lpad(i::text, 6, '0'), 'tr' || i, '{}', i
           FROM generate_series($1::int, $2::int) AS i`,
        [from, to],
      );
    await insertRoots(1, 3);
    const session = new pg.Client(db.url);
    await session.connect();
    cleanups.push(() => session.end());
    const seqs = new Map<string, number>();
    const commit = (ids: string[]) => {
      const journal = ids.map((id) => {
        const seq = (seqs.get(id) ?? 0) + 1;
        seqs.set(id, seq);
        return {
          workflow_id: id,
          tenant_id: 't',
          last_event: seq,
          events: [],
          spans: null,
          calls: 0,
          tokens_in: 0,
          tokens_out: 0,
          cost_usd: 0,
          simulated_cost_usd: 0,
        };
      });
      return session.query(
        `SELECT baton_group_commit('', '{}', '{}', '{}', '{}', $1, $2, '[]', 0, $3, $4, $5, NULL,
           '{}', '{}', '{}', '{}') AS lost`,
        [
          JSON.stringify(ids.map((id) => ({ id, m: 1, taken: 0, status: 'running' }))),
          ids.length,
          JSON.stringify(journal),
          ids,
          journal.map((j) => j.last_event),
        ],
      );
    };
    for (let i = 0; i < 8; i++) await commit(['wf_000001', 'wf_000002']);
    await insertRoots(4, 20_000);
    await pool.query(
      `INSERT INTO journal (workflow_id, tenant_id, last_event, events)
       SELECT 'wf_' || lpad((4 + i % 19997)::text, 6, '0'), 't', 1 + i / 19997, '[]' FROM generate_series(1, 40000) AS i`,
    );
    for (const id of ['wf_010000', 'wf_010001']) seqs.set(id, 100);
    const tuplesRead = async () => {
      await session.query('SELECT pg_stat_force_next_flush()');
      const { rows } = await session.query<{ n: string }>(
        `SELECT coalesce(sum(idx_tup_read), 0) + (SELECT coalesce(sum(seq_tup_read), 0) FROM pg_stat_user_tables
                 WHERE relname IN ('workflows', 'journal')) AS n
           FROM pg_stat_user_indexes WHERE relname IN ('workflows', 'journal')`,
      );
      return Number(rows[0]?.n);
    };
    const before = await tuplesRead();
    await commit(['wf_010000', 'wf_010001', 'wf_000001']);
    expect((await tuplesRead()) - before).toBeLessThan(100);
    const { rows } = await pool.query<{ n: string }>(
      "SELECT max(last_event) AS n FROM journal WHERE workflow_id = 'wf_010000'",
    );
    expect(Number(rows[0]?.n)).toBe(101);
  });
});
