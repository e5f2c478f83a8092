import { afterAll, describe, expect, it } from 'vitest';
import { databaseUnderTest } from '../support/database-under-test.js';
import { startServer, stopAllServers, tempDir, waitFor } from '../support/server-process.js';

/**
 * The real server over PostgreSQL (DATABASE_URL): it migrates a fresh database at boot, says so
 * in /healthz, runs a workflow with the built-in simulated model, and keeps it across a restart.
 * A second instance over the same database runs beside it: a workflow waiting at its checkpoint,
 * submitted to one, is approved through the other while a stream is open on each, and both
 * streams see every event once, in order. The boot log names the database without its password.
 */
const tmp = tempDir('baton-pg-instance-');
afterAll(async () => {
  await stopAllServers();
  tmp.cleanup();
});

describe('baton over PostgreSQL', () => {
  it('runs, restarts on its data, shares it with a second instance and never logs the password', {
    timeout: 60_000,
  }, async () => {
    const database = await databaseUnderTest('postgres', tmp.dbPath());
    const url = new URL(database.env.DATABASE_URL as string);
    url.password = 'hunter2-canary-password';
    // Trust auth on the test cluster accepts any password: the canary reaches the server's config only.
    const env = { DATABASE_URL: url.toString() };
    try {
      const first = await startServer({ dbPath: tmp.dbPath(), env });
      const health = await (await fetch(`${first.url}/healthz`)).json();
      expect(health).toMatchObject({ status: 'ok', database: 'postgres' });

      const submitted = await fetch(`${first.url}/v1/workflows`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          name: 'pg-smoke',
          root: { type: 'prompt', name: 'hello', agent: 'writer', user: 'Say hello' },
          agents: { writer: { model: 'sim/sonnet' } },
        }),
      });
      expect(submitted.status).toBe(202);
      const { id } = (await submitted.json()) as { id: string };
      const done = await waitFor('the workflow completed', async () => {
        const view = (await (await fetch(`${first.url}/v1/workflows/${id}`)).json()) as { status: string };
        return view.status === 'completed' ? view : undefined;
      });
      expect(done.status).toBe('completed');
      expect(await database.count(`SELECT count(*) FROM events WHERE workflow_id = '${id}'`)).toBeGreaterThan(2);

      const second = await startServer({ dbPath: tmp.dbPath(), env });
      const critical = await fetch(`${first.url}/v1/workflows`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          name: 'pg-critical',
          task: { type: 'migration', complexity: 'critical' },
          agents: { dev: { model: 'sim/haiku' } },
          root: {
            type: 'sequence',
            name: 'steps',
            steps: ['one', 'two', 'three'].map((name) => ({ type: 'prompt', name, agent: 'dev', user: name })),
          },
        }),
      });
      expect(critical.status).toBe(202);
      const waiting = ((await critical.json()) as { id: string }).id;
      await waitFor('the checkpoint event', async () =>
        (await (await fetch(`${second.url}/v1/workflows/${waiting}/events`)).text()).includes('"checkpoint"'),
      );
      const streams = [first, second].map((server) =>
        fetch(`${server.url}/v1/workflows/${waiting}/events`, { headers: { accept: 'text/event-stream' } }).then(
          (res) => res.text(),
        ),
      );
      // Both streams are open (their subscriptions precede their backlog reads) before the approval.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect((await fetch(`${second.url}/v1/workflows/${waiting}/approve`, { method: 'POST' })).status).toBe(202);
      const total = await waitFor('the approved workflow to end', async () => {
        const view = (await (await fetch(`${first.url}/v1/workflows/${waiting}`)).json()) as { status: string };
        return view.status === 'completed'
          ? database.count(`SELECT count(*) FROM events WHERE workflow_id = '${waiting}'`)
          : undefined;
      });
      for (const frames of await Promise.all(streams)) {
        const ids = [...frames.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
        expect(ids).toEqual(Array.from({ length: total }, (_, i) => i + 1));
      }
      type Health = { instance: string; leases: { claims: number; held: number; losses: number } };
      const healths = await Promise.all(
        [first, second].map(async (s) => (await (await fetch(`${s.url}/healthz`)).json()) as Health),
      );
      expect(new Set(healths.map((h) => h.instance)).size).toBe(2);
      const claims = healths.reduce((sum, h) => sum + h.leases.claims, 0);
      expect(claims).toBeGreaterThanOrEqual(2);
      expect(healths.every((h) => h.leases.held === 0 && h.leases.losses === 0)).toBe(true);
      second.kill('SIGTERM');
      expect((await second.exited).code).toBe(0);

      first.kill('SIGTERM');
      expect((await first.exited).code).toBe(0);
      const again = await startServer({ dbPath: tmp.dbPath(), env });
      const view = (await (await fetch(`${again.url}/v1/workflows/${id}`)).json()) as { status: string };
      expect(view.status).toBe('completed');
      // The stream of a finished workflow replays its journal and closes.
      const stream = await fetch(`${again.url}/v1/workflows/${id}/events`, {
        headers: { accept: 'text/event-stream' },
      });
      const frames = await stream.text();
      expect(frames).toContain('event: workflowEnd');
      expect(frames.match(/^id: /gm)?.length).toBe(
        await database.count(`SELECT count(*) FROM events WHERE workflow_id = '${id}'`),
      );

      for (const server of [first, second, again]) {
        const log = server.logs.join('\n');
        expect(log).not.toContain('hunter2-canary-password');
        expect(log).toContain('"database":"postgres://');
      }
    } finally {
      await stopAllServers();
      await database.close();
    }
  });
});
