import { describe, expect, it, onTestFinished } from 'vitest';
import { DATABASE_KINDS, databaseUnderTest } from '../support/database-under-test.js';
import { textMessage } from '../support/fake-anthropic.js';
import { fakeAnthropicSuite } from '../support/fake-anthropic-suite.js';
import {
  callIdentity,
  countByIdentity,
  firstUserMessage,
  getWorkflow,
  waitAllTerminal,
} from '../support/process-calls.js';
import { expectedOutput, identityOf, sequenceDefinition } from '../support/process-workload.js';
import { errorRecords, startServer, waitFor } from '../support/server-process.js';

/**
 * docs/design.md#execution acceptance: SIGKILL the real process mid-run, restart it on the same database (the
 * SQLite file, or a PostgreSQL database of its own), and
 * check from the fake Anthropic API's request log that completed nodes are replayed from the store
 * (never called again) and in-flight nodes are called at most once more.
 */

const WORKFLOWS = 30;
const RUN = Math.random().toString(36).slice(2, 8);

interface Submitted {
  id: string;
  tag: string;
  steps: number;
}

const tagOf = (i: number) => `wf${String(i).padStart(2, '0')}-${RUN}`;
const answerFor = (tag: string, node: string) => expectedOutput(identityOf(tag, node)) as string;
const key = identityOf;

let replyCount = 0;

const suite = fakeAnthropicSuite('baton-crash-', {
  defaultReply: (request) => {
    // 150–300 ms, spread deterministically.
    const delayMs = 150 + ((replyCount++ * 53) % 151);
    return { body: textMessage(expectedOutput(callIdentity(request)) as string), delayMs };
  },
  stopServersAfterEach: true,
});

describe.each(DATABASE_KINDS)('crash and resume (SIGKILL mid-run) on %s', (kind) => {
  it('replays completed nodes from the store and calls in-flight nodes at most once more', {
    timeout: 30_000,
  }, async () => {
    // Each database's case starts from an empty request log (the tags repeat, the stores are fresh).
    suite.fake.requests.length = 0;
    const dbPath = suite.tmp.dbPath();
    const database = await databaseUnderTest(kind, dbPath);
    onTestFinished(() => database.close());
    // The persistent cache tier is off: this suite counts what the journal replays. With it on, an
    // answer that reached the cache before the kill, its node's commit not, is served from the cache
    // after the restart (no call at all); on SQLite the two usually share a group commit, on
    // PostgreSQL the cache writes apart from it, so the count below would differ by kind.
    const env = { ...suite.env(), ...database.env, CACHE_PERSIST: 'false' };
    const first = await startServer({ dbPath, env });

    // Submit 30 workflows of 3 or 4 prompt steps.
    const submitted: Submitted[] = await Promise.all(
      Array.from({ length: WORKFLOWS }, async (_, i) => {
        const steps = i % 2 === 0 ? 3 : 4;
        const res = await fetch(`${first.url}/v1/workflows`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(sequenceDefinition(`crash-resume-${i}`, tagOf(i), steps, { chained: true })),
        });
        expect(res.status).toBe(202);
        const body = (await res.json()) as { id: string };
        return { id: body.id, tag: tagOf(i), steps };
      }),
    );
    const totalNodes = submitted.reduce((sum, w) => sum + w.steps, 0);
    expect(totalNodes).toBe(105);
    const byId = new Map(submitted.map((w) => [w.id, w]));
    const tags = new Set(submitted.map((w) => w.tag));

    // Wait until a good share of nodes completed while others are still running.
    await waitFor(
      'some nodes completed and others in flight',
      async () => {
        const views = await Promise.all(submitted.map((w) => getWorkflow(first, w.id)));
        const prompts = views.flatMap((v) => v.tree.children);
        const seen = {
          completed: prompts.filter((n) => n.status === 'completed').length,
          running: prompts.filter((n) => n.status === 'running').length,
        };
        return seen.completed >= 25 && seen.running >= 5;
      },
      15_000,
      10,
    );
    first.kill('SIGKILL');
    const exit = await first.exited;
    expect(exit.signal).toBe('SIGKILL');

    // What the store holds at the moment of the crash.
    const rows = await database.promptNodes();
    // docs/design.md#events-spans-metrics-and-rewards: a completed node's spans commit with it, so the crash lost
    // none of them.
    const completedWithoutSpans = await database.count(
      `SELECT count(*) FROM nodes n WHERE n.type = 'prompt' AND n.status = 'completed' AND (
         NOT EXISTS (SELECT 1 FROM spans s WHERE s.node_id = n.id AND s.type = 'agent_span' AND s.status = 'ok')
         OR NOT EXISTS (SELECT 1 FROM spans s WHERE s.node_id = n.id AND s.type = 'generation_span' AND s.status = 'ok'))`,
    );
    expect(completedWithoutSpans).toBe(0);
    expect(rows.size).toBe(totalNodes);
    const completedBefore = new Set<string>();
    const runningBefore = new Set<string>();
    for (const [identity, node] of rows) {
      expect(tags.has(identity.split(' ')[0] ?? ''), `node row of an unknown workflow: ${identity}`).toBe(true);
      if (node.status === 'completed') completedBefore.add(identity);
      if (node.status === 'running') runningBefore.add(identity);
    }
    expect(completedBefore.size).toBeGreaterThanOrEqual(25);
    expect(completedBefore.size).toBeLessThan(totalNodes);
    expect(runningBefore.size).toBeGreaterThan(0);

    // Let any request the dead process sent finish landing in the log before splitting it.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const cut = suite.fake.requests.length;
    const before = suite.fake.requests.slice(0, cut);
    const beforeCounts = countByIdentity(before);
    // Before the crash every node was called at most once, and every completed node exactly once.
    for (const [k, n] of beforeCounts) expect(n, `calls before the crash for ${k}`).toBe(1);
    for (const k of completedBefore) expect(beforeCounts.get(k), `pre-crash calls for completed ${k}`).toBe(1);

    // Restart on the same database and the same fake.
    const second = await startServer({ dbPath, env });
    const finals = await waitAllTerminal(
      second,
      submitted.map((w) => w.id),
      20_000,
    );

    // Terminal workflows leave no span open: the dead execution's spans ended `interrupted`.
    const openSpans = await database.count('SELECT count(*) FROM spans WHERE status IS NULL');
    const interrupted = await database.count("SELECT count(*) FROM spans WHERE status = 'interrupted'");
    const nodesWithoutSpans = await database.count(
      `SELECT count(*) FROM nodes n WHERE n.type = 'prompt' AND NOT EXISTS
         (SELECT 1 FROM spans s WHERE s.node_id = n.id AND s.type = 'generation_span' AND s.status = 'ok')`,
    );
    expect(openSpans).toBe(0);
    expect(interrupted).toBeGreaterThan(0);
    expect(nodesWithoutSpans).toBe(0);

    for (const view of finals) {
      const workflow = byId.get(view.id)!;
      expect(view.status, `workflow ${workflow.tag}`).toBe('completed');
      expect(view.output).toBe(answerFor(workflow.tag, `step-${workflow.steps}`));
      expect(view.tree.children).toHaveLength(workflow.steps);
      for (const node of view.tree.children) {
        const k = key(workflow.tag, node.name);
        expect(node.status, k).toBe('completed');
        expect(node.output, k).toBe(answerFor(workflow.tag, node.name));
        // A node committed before the crash kept its single attempt.
        if (completedBefore.has(k)) expect(node.attempts, k).toBe(1);
      }
    }

    expect(errorRecords(first)).toEqual([]);
    expect(errorRecords(second)).toEqual([]);

    const after = suite.fake.requests.slice(cut);
    const afterCounts = countByIdentity(after);
    // No request after the restart for a node that had completed before the kill.
    const repeated = [...afterCounts.keys()].filter((k) => completedBefore.has(k));
    expect(repeated).toEqual([]);
    // Every node that had not completed is called exactly once after the restart…
    for (const workflow of submitted) {
      for (let s = 1; s <= workflow.steps; s++) {
        const k = key(workflow.tag, `step-${s}`);
        expect(afterCounts.get(k) ?? 0, `post-restart calls for ${k}`).toBe(completedBefore.has(k) ? 0 : 1);
        // …so over both lives a node is called at most twice (one duplicate for an in-flight call).
        expect((beforeCounts.get(k) ?? 0) + (afterCounts.get(k) ?? 0), `total calls for ${k}`).toBeLessThanOrEqual(2);
      }
    }
    // Nothing else was called, and duplicates come only from nodes that were running at the kill.
    expect(after.length).toBe(totalNodes - completedBefore.size);
    for (const k of afterCounts.keys()) {
      if (beforeCounts.has(k)) expect(runningBefore.has(k), `${k} was called before the crash`).toBe(true);
    }

    // Replayed outputs feed later steps: each post-restart step-k saw step-(k-1)'s stored answer.
    for (const request of after) {
      const [tag = '', node = ''] = callIdentity(request).split(' ');
      const step = Number(node.replace('step-', ''));
      const expected =
        step === 1
          ? `${tag} ${node}`
          : `${tag} ${node}\n\n<prev>\n${JSON.stringify(answerFor(tag, `step-${step - 1}`))}\n</prev>`;
      expect(firstUserMessage(request)).toBe(expected);
      expect((request.body as { model?: string }).model).toBe('claude-sonnet-5-5');
      // SDK 1.x authenticates with a bearer token; older versions sent x-api-key.
      const credential = request.headers['x-api-key'] ?? request.headers.authorization?.replace(/^Bearer /, '');
      expect(credential).toBe('test-key');
    }
  });
});
