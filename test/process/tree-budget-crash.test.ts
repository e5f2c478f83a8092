import { describe, expect, it } from 'vitest';
import type { FakeReply, RecordedRequest } from '../support/fake-anthropic.js';
import { fakeAnthropicSuite } from '../support/fake-anthropic-suite.js';
import { type ServerProcess, startServer, waitFor } from '../support/server-process.js';
import { treeDefinition, treeReply } from '../support/tree-budget-fixture.js';

/**
 * The tree's request budget holds across a crash: each request is recorded on
 * the root's row before it is sent, so a tree resumed after SIGKILL — with one request in flight
 * that no `agentPromptEnd` ever recorded — pays from the same budget. The real server, killed.
 */
const MODEL = 'anthropic/claude-sonnet-5-5';
/** While true, requests after the first hang: the kill comes with one in flight. */
let holding = true;

function reply(request: RecordedRequest): FakeReply {
  if (holding && suite.fake.requests.length >= 2) return { hang: true };
  return treeReply(request);
}

const suite = fakeAnthropicSuite('baton-tree-budget-', { defaultReply: reply });

async function getJson(server: ServerProcess, path: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${server.url}${path}`);
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

/** Every workflow of the tree under `id` has ended. */
async function treeEnded(server: ServerProcess, id: string): Promise<boolean> {
  const workflow = await getJson(server, `/v1/workflows/${id}`);
  if (workflow.endedAt === null) return false;
  const children = await getJson(server, `/v1/workflows?parentWorkflowId=${id}&limit=100`);
  for (const child of children.items as Array<{ id: string }>) if (!(await treeEnded(server, child.id))) return false;
  return true;
}

describe('the tree budget across a crash', { timeout: 240_000 }, () => {
  it('a root with maxLlmCalls 3, killed with its 2nd request in flight, sends 3 requests in all', async () => {
    const dbPath = suite.tmp.dbPath();
    const env = {
      ANTHROPIC_API_KEY: 'sk-ant-test-key-000',
      ANTHROPIC_BASE_URL: suite.fake.url,
      RATE_LIMIT_PER_MINUTE: '0',
    };
    const first = await startServer({ dbPath, env, startTimeoutMs: 90_000 });
    const res = await fetch(`${first.url}/v1/workflows`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(treeDefinition(MODEL, { limits: { maxLlmCalls: 3 }, reflection: { enabled: false } })),
    });
    expect(res.status).toBe(202);
    const id = ((await res.json()) as { id: string }).id;
    await waitFor('the second request, in flight', () => suite.fake.requests.length >= 2);
    first.kill('SIGKILL');
    await first.exited;
    expect(suite.fake.requests).toHaveLength(2);

    holding = false;
    const second = await startServer({ dbPath, env, startTimeoutMs: 90_000 });
    await waitFor('the tree to end after the restart', () => treeEnded(second, id), 20_000, 50);
    const done = await getJson(second, `/v1/workflows/${id}`);
    expect(suite.fake.requests).toHaveLength(3);
    expect(done.status).toBe('failed');
    expect(done.error).toMatchObject({ code: 'LLM_CALL_LIMIT_EXCEEDED' });
    second.kill('SIGTERM');
    await second.exited;
  });
});
