import { afterAll, describe, expect, it } from 'vitest';
import { databaseUnderTest } from '../support/database-under-test.js';
import { startServer, stopAllServers, tempDir, waitFor } from '../support/server-process.js';

/**
 * The real server over PostgreSQL (DATABASE_URL): it migrates a fresh database at boot, says so
 * in /healthz, runs a workflow with the built-in simulated model, and keeps it across a restart.
 * A second instance over the same database is refused at boot, since this build runs one instance
 * per database; the boot log names the database without its password.
 */
const tmp = tempDir('baton-pg-instance-');
afterAll(async () => {
  await stopAllServers();
  tmp.cleanup();
});

describe('baton over PostgreSQL', () => {
  it('runs, restarts on its data, refuses a second instance and never logs the password', {
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

      const second = startServer({ dbPath: tmp.dbPath(), env, startTimeoutMs: 20_000 });
      await expect(second).rejects.toThrow(/another baton instance is running over this PostgreSQL database/);

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

      for (const server of [first, again]) {
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
