import { afterAll, describe, expect, it } from 'vitest';
import { databaseUnderTest } from '../support/database-under-test.js';
import { startServer, stopAllServers, tempDir, waitFor } from '../support/server-process.js';

/**
 * A rolling restart over PostgreSQL (docs/operations.md#scale-out): SIGTERM one of two instances
 * while it runs workflows. It drains, gives its leases back and exits 0; the other instance takes
 * the workflows at once — long before their leases (60 s here) could have run out — and finishes
 * them, each step started once per attempt and no span left open.
 */
const tmp = tempDir('baton-pg-restart-');
afterAll(async () => {
  await stopAllServers();
  tmp.cleanup();
});

const WORKFLOWS = 12;

describe('rolling restart over PostgreSQL', () => {
  it('hands a stopping instance’s workflows to the other at once', { timeout: 90_000 }, async () => {
    const database = await databaseUnderTest('postgres', tmp.dbPath());
    try {
      const env = { ...database.env, LEASE_MS: '60000', SHUTDOWN_GRACE_MS: '300', RATE_LIMIT_PER_MINUTE: '0' };
      const first = await startServer({ dbPath: tmp.dbPath('a'), env });
      const ids: string[] = [];
      for (let i = 0; i < WORKFLOWS; i++) {
        const res = await fetch(`${first.url}/v1/workflows`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            name: `restart-${i}`,
            input: { i },
            agents: { a: { model: 'sim/haiku', simulate: { latencyMs: 2500 } } },
            options: { cache: false },
            root: {
              type: 'sequence',
              name: 'main',
              steps: [1, 2, 3, 4].map((s) => ({ type: 'prompt', name: `s${s}`, agent: 'a', user: `{{input.i}} ${s}` })),
            },
          }),
        });
        expect(res.status).toBe(202);
        ids.push(((await res.json()) as { id: string }).id);
      }
      // The first instance holds them all, mid-run; then the second one starts.
      const firstId = await waitFor(
        'the first instance running them',
        async () => {
          const health = (await (await fetch(`${first.url}/healthz`)).json()) as {
            instance: string;
            leases: { held: number };
          };
          return health.leases.held === WORKFLOWS ? health.instance : undefined;
        },
        10_000,
        50,
      );
      const second = await startServer({ dbPath: tmp.dbPath('b'), env });
      const stoppedAt = Date.now();
      first.kill('SIGTERM');
      expect((await first.exited).code).toBe(0);
      // It gave every lease back on its way out: none is left to run out.
      expect(await database.count(`SELECT count(*) FROM workflows WHERE lease_owner = '${firstId}'`)).toBe(0);

      await waitFor(
        'every workflow completed on the second instance',
        async () => (await database.count("SELECT count(*) FROM workflows WHERE status = 'completed'")) === WORKFLOWS,
        30_000,
        100,
      );
      // Well inside the 60 s leases: they were given back, not left to expire.
      expect(Date.now() - stoppedAt).toBeLessThan(30_000);
      const health = (await (await fetch(`${second.url}/healthz`)).json()) as { leases: { claims: number } };
      expect(health.leases.claims).toBeGreaterThanOrEqual(1);
      expect(
        await database.count(
          `SELECT count(*) FROM (SELECT workflow_id, node_id, payload ->> 'attempt' FROM events
             WHERE type = 'stepStart' GROUP BY 1, 2, 3 HAVING count(*) > 1) twice`,
        ),
      ).toBe(0);
      expect(await database.count('SELECT count(*) FROM spans WHERE ended_at IS NULL')).toBe(0);
      for (const id of ids) {
        const view = (await (await fetch(`${second.url}/v1/workflows/${id}`)).json()) as { status: string };
        expect(view.status).toBe('completed');
      }
    } finally {
      await stopAllServers();
      await database.close();
    }
  });
});
