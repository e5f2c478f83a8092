import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../../src/inproc/clock.js';
import { definition, prompt, submit } from '../../support/api-fixtures.js';
import { buildTestApp } from '../../support/build-app.js';
import { freshPostgresDatabase } from '../../support/postgres-database.js';
import { createScriptedModel, rateLimited } from '../../support/scripted-model.js';
import { waitFor } from '../../support/server-process.js';

/**
 * Background jobs over PostgreSQL (store/postgres/background-jobs.ts, graphile-worker): a run told
 * to wait longer than its lease (a long retry-after) gives the lease and its running place back,
 * parked, and a job queued in the same statement resumes it at its time, with no extra model call;
 * the maintenance crons are known to graphile-worker once however many instances run them.
 */
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

describe('PostgreSQL: background jobs', () => {
  it('parks a run past its lease during a long retry-after and resumes it at its time', async () => {
    const db = await freshPostgresDatabase();
    cleanups.push(db.drop);
    const model = createScriptedModel({ clock: systemClock });
    const t = await buildTestApp(
      { DATABASE_URL: db.url, LEASE_MS: '1500', LEASE_HEARTBEAT_MS: '500' },
      { providers: { script: model } },
    );
    cleanups.push(() => t.close());
    const sql = new pg.Pool({ connectionString: db.url, max: 2 });
    cleanups.push(() => sql.end());
    const row = async (id: string) =>
      (
        await sql.query<{ status: string; parked: number; lease_owner: string | null }>(
          'SELECT status, parked, lease_owner FROM workflows WHERE id = $1',
          [id],
        )
      ).rows[0];

    // The provider asks to wait 3 s: longer than the 1.5 s lease.
    model.enqueue({ error: rateLimited(3_000) }, { text: 'done' });
    const res = await submit(
      t.app,
      definition(prompt('only'), { agents: { a: { model: 'script/x' } }, options: { cache: false } }),
    );
    expect(res.statusCode).toBe(202);
    const id = (res.json() as { id: string }).id;
    const startedAt = Date.now();
    await waitFor('the run to park', async () => (await row(id))?.parked === 1, 5_000, 20);
    expect(await row(id)).toMatchObject({ status: 'running', lease_owner: null });
    expect(t.deps.executor.running).toBe(0);
    const jobs = await sql.query<{ task_identifier: string; key: string }>(
      'SELECT task_identifier, key FROM graphile_worker.jobs',
    );
    expect(jobs.rows).toEqual([{ task_identifier: 'baton_resume_workflow', key: `resume:${id}` }]);

    await waitFor('the resumed run to complete', async () => (await row(id))?.status === 'completed', 10_000, 50);
    // Not before the provider's time; and the one 429 plus the one answer are all the calls.
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(3_000);
    expect(model.calls).toHaveLength(2);
    expect(model.unexpected).toEqual([]);
    const spans = await sql.query<{ n: string }>(
      'SELECT count(*) AS n FROM spans WHERE workflow_id = $1 AND ended_at IS NULL',
      [id],
    );
    expect(Number(spans.rows[0]?.n)).toBe(0);
  });

  it('knows each maintenance cron once, with two instances running them', async () => {
    const db = await freshPostgresDatabase();
    cleanups.push(db.drop);
    const first = await buildTestApp({ DATABASE_URL: db.url });
    const second = await buildTestApp({ DATABASE_URL: db.url });
    cleanups.push(
      () => first.close(),
      () => second.close(),
    );
    const sql = new pg.Pool({ connectionString: db.url, max: 1 });
    cleanups.push(() => sql.end());
    const known = await waitFor(
      'the crons registered',
      async () => {
        const { rows } = await sql.query<{ identifier: string }>(
          'SELECT identifier FROM graphile_worker._private_known_crontabs ORDER BY identifier',
        );
        return rows.length >= 3 ? rows.map((r) => r.identifier) : undefined;
      },
      5_000,
      50,
    );
    expect(known).toEqual(['baton_prune_idempotency', 'baton_purge_corpora', 'baton_sweep_retention']);
  });
});
