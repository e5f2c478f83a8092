import { afterAll, describe, expect, it } from 'vitest';
import { type ServerProcess, startServer, stopAllServers, tempDir, waitFor } from '../support/server-process.js';

/**
 * A workflow waiting at its human checkpoint survives a SIGKILL: after the restart it is still
 * idle and waiting (no model call, one checkpoint event), and an approval then runs it.
 */
const tmp = tempDir();
afterAll(async () => {
  await stopAllServers();
  tmp.cleanup();
});

async function json(server: ServerProcess, path: string, init: RequestInit = {}) {
  const res = await fetch(`${server.url}${path}`, init);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}
const events = async (server: ServerProcess, id: string) =>
  ((await json(server, `/v1/workflows/${id}/events?limit=1000`)).body.items as Array<{ type: string }>).map(
    (e) => e.type,
  );

describe('human checkpoint across a crash', () => {
  it('keeps the workflow waiting through SIGKILL and a restart, then runs it on approval', async () => {
    const dbPath = tmp.dbPath();
    const first = await startServer({ dbPath });
    const submitted = await json(first, '/v1/workflows', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'critical-change',
        task: { type: 'migration', complexity: 'critical' },
        agents: { dev: { model: 'sim/haiku' } },
        root: { type: 'prompt', name: 'plan', agent: 'dev', user: 'Plan it.' },
      }),
    });
    expect(submitted.status).toBe(202);
    const id = submitted.body.id as string;
    await waitFor('the checkpoint event', async () => (await events(first, id)).includes('checkpoint'));
    first.kill('SIGKILL');
    await first.exited;

    const second = await startServer({ dbPath });
    // The resumed execution runs and returns at once: give it the time a step would take, then look.
    await waitFor(
      'the restarted server to list it',
      async () => (await json(second, `/v1/workflows/${id}`)).status === 200,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await json(second, `/v1/workflows/${id}`)).body).toMatchObject({
      status: 'idle',
      checkpoint: { state: 'pending' },
    });
    expect(await events(second, id)).toEqual(['checkpoint']);

    const approved = await json(second, `/v1/workflows/${id}/approve`, { method: 'POST' });
    expect(approved.status).toBe(202);
    const done = await waitFor('completion after the approval', async () => {
      const view = await json(second, `/v1/workflows/${id}`);
      return view.body.status === 'completed' ? view.body : undefined;
    });
    expect(done.output).toEqual(expect.any(String));
    expect(await events(second, id)).toEqual(
      expect.arrayContaining(['checkpoint', 'workflowStart', 'agentPromptStart', 'workflowEnd']),
    );
  });
});
