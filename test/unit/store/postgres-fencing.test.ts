import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { definition, prompt, submit } from '../../support/api-fixtures.js';
import { buildTestApp } from '../../support/build-app.js';
import { freshPostgresDatabase } from '../../support/postgres-database.js';
import { waitFor } from '../../support/server-process.js';

/**
 * The lease fence with the real engine over PostgreSQL: while a run's model call is in flight its
 * lease is taken over (as another instance would after this one paused past its lease). The run's
 * next commit is refused, the run stops (`LEASE_LOST`) without writing anything more, and once the
 * lease is free again the run is claimed anew and resumes where the journal stands: its seqs stay
 * gap-free and the node rows agree with the events.
 */
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

describe('PostgreSQL: the lease fence in the engine', () => {
  it('stops a run whose lease was taken over, writes nothing more of it, and resumes it later', async () => {
    const db = await freshPostgresDatabase();
    cleanups.push(db.drop);
    const t = await buildTestApp({ DATABASE_URL: db.url, LEASE_MS: '60000', LEASE_HEARTBEAT_MS: '1000' });
    cleanups.push(() => t.close());
    const sql = new pg.Pool({ connectionString: db.url, max: 2 });
    cleanups.push(() => sql.end());
    const count = async (query: string, params: unknown[] = []) =>
      Number((await sql.query<{ n: string }>(query, params)).rows[0]?.n);

    const slow = { a: { model: 'sim/sonnet', simulate: { latencyMs: 600 } } };
    const res = await submit(
      t.app,
      definition(
        { type: 'sequence', name: 'main', steps: [prompt('one'), prompt('two')] },
        {
          agents: slow,
          options: { cache: false },
        },
      ),
    );
    expect(res.statusCode).toBe(202);
    const id = (res.json() as { id: string }).id;
    const events = (n = 0) => count('SELECT count(*) AS n FROM events WHERE workflow_id = $1 AND seq > $2', [id, n]);
    // Step one's call is in flight: its stepStart is committed.
    await waitFor(
      'step one started',
      async () =>
        (await count(
          "SELECT count(*) AS n FROM events WHERE workflow_id = $1 AND type = 'stepStart' AND payload ->> 'node' = 'one'",
          [id],
        )) === 1,
      5_000,
      10,
    );
    // Another instance takes the run over: its epoch moves on.
    await sql.query(
      "UPDATE workflows SET lease_owner = 'in_thief', lease_epoch = lease_epoch + 1, lease_until = now() + interval '1 hour' WHERE id = $1",
      [id],
    );
    const before = await events();
    const leases = () => t.deps.instance.leases?.() ?? { fenceRejections: 0, losses: 0, held: -1 };
    await waitFor('the fence to refuse the run', async () => leases().fenceRejections > 0, 5_000, 10);
    expect(leases()).toMatchObject({ losses: 1, held: 0 });
    await waitFor('the run to stop here', async () => t.deps.executor.running === 0, 5_000, 10);
    // Nothing of the refused commit, nor after it, reached the database.
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect(await events()).toBe(before);
    expect(await count("SELECT count(*) AS n FROM nodes WHERE workflow_id = $1 AND status = 'completed'", [id])).toBe(
      0,
    );

    // The thief goes away (its lease freed): the next claim resumes the run, here.
    await sql.query('UPDATE workflows SET lease_owner = NULL, lease_until = NULL WHERE id = $1', [id]);
    await waitFor(
      'the resumed run to complete',
      async () =>
        (await count("SELECT count(*) AS n FROM workflows WHERE id = $1 AND status = 'completed'", [id])) === 1,
      10_000,
      50,
    );
    const total = await events();
    expect(await count('SELECT max(seq) AS n FROM events WHERE workflow_id = $1', [id])).toBe(total);
    expect(await count('SELECT count(DISTINCT seq) AS n FROM events WHERE workflow_id = $1', [id])).toBe(total);
    // Step one started twice (attempt 1 stopped by the fence, attempt 2 completed), each once.
    expect(
      (
        await sql.query<{ attempt: string }>(
          "SELECT payload ->> 'attempt' AS attempt FROM events WHERE workflow_id = $1 AND type = 'stepStart' AND payload ->> 'node' = 'one' ORDER BY seq",
          [id],
        )
      ).rows.map((r) => r.attempt),
    ).toEqual(['1', '2']);
    expect(await count("SELECT attempts AS n FROM nodes WHERE workflow_id = $1 AND name = 'one'", [id])).toBe(2);
    expect(await count('SELECT count(*) AS n FROM spans WHERE workflow_id = $1 AND ended_at IS NULL', [id])).toBe(0);
    expect(await count('SELECT lease_epoch AS n FROM workflows WHERE id = $1', [id])).toBe(3);
  });
});
