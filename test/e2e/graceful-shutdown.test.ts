import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type FakeServer, type RecordedRequest, startFakeAnthropic, textMessage } from '../helpers/fake-anthropic.js';
import {
  errorRecords,
  type ServerProcess,
  startServer,
  stopAllServers,
  tempDir,
  waitFor,
} from '../helpers/server-process.js';

/**
 * docs/design.md#execution graceful shutdown: on SIGTERM the service answers 503, lets in-flight LLM calls finish
 * within SHUTDOWN_GRACE_MS, commits, exits 0; the rest resumes at the next start. When the grace
 * period is shorter than a call, that call is aborted and runs again after the restart.
 */

const MODEL = 'anthropic/claude-sonnet-5-5';
const STEPS = 3;
const TERMINAL = ['completed', 'failed', 'cancelled'];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const answerFor = (k: string) => `answer(${k})`;

function definition(tag: string) {
  return {
    name: 'graceful',
    input: { tag },
    agents: { writer: { model: MODEL } },
    root: {
      type: 'sequence',
      name: 'main',
      steps: Array.from({ length: STEPS }, (_, s) => ({
        type: 'prompt',
        name: `step-${s + 1}`,
        agent: 'writer',
        user: `{{input.tag}} step-${s + 1}`,
      })),
    },
  };
}

function callKey(request: RecordedRequest): string {
  const content = (request.body as { messages?: Array<{ content: unknown }> } | undefined)?.messages?.[0]?.content;
  if (typeof content !== 'string') throw new Error(`unexpected request body: ${JSON.stringify(request.body)}`);
  return content.split('\n')[0] ?? '';
}

function countByKey(requests: readonly RecordedRequest[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const request of requests) counts.set(callKey(request), (counts.get(callKey(request)) ?? 0) + 1);
  return counts;
}

async function submit(server: ServerProcess, tags: readonly string[]): Promise<Map<string, string>> {
  const ids = await Promise.all(
    tags.map(async (tag) => {
      const res = await fetch(`${server.url}/v1/workflows`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(definition(tag)),
      });
      expect(res.status).toBe(202);
      return ((await res.json()) as { id: string }).id;
    }),
  );
  return new Map(ids.map((id, i) => [id, tags[i]!]));
}

/** "<tag> <node>" → status, read straight from the SQLite file of a stopped server. */
function nodeStatuses(
  dbPath: string,
  idToTag: ReadonlyMap<string, string>,
): Map<string, { status: string; attempts: number }> {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    const rows = db
      .prepare("SELECT workflow_id AS workflowId, name, status, attempts FROM nodes WHERE type = 'prompt'")
      .all() as Array<{ workflowId: string; name: string; status: string; attempts: number }>;
    return new Map(
      rows.map((r) => [`${idToTag.get(r.workflowId)} ${r.name}`, { status: r.status, attempts: r.attempts }]),
    );
  } finally {
    db.close();
  }
}

interface WorkflowView {
  id: string;
  status: string;
  output: unknown;
  tree: { children: Array<{ name: string; status: string; attempts: number }> };
}

async function waitAllTerminal(server: ServerProcess, ids: readonly string[]): Promise<WorkflowView[]> {
  return waitFor(
    'every workflow terminal after the restart',
    async () => {
      const views = await Promise.all(
        ids.map(async (id) => (await (await fetch(`${server.url}/v1/workflows/${id}`)).json()) as WorkflowView),
      );
      return views.every((v) => TERMINAL.includes(v.status)) ? views : undefined;
    },
    15_000,
    50,
  );
}

type Probe =
  | { what: string; status: number; code?: string; retryAfter?: string | null }
  | { what: string; error: string };

/** One request during shutdown: its status (and error code), or the network error that replaced it. */
async function probe(url: string, what: string, init?: RequestInit): Promise<Probe> {
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(5_000) });
    const text = await res.text();
    let code: string | undefined;
    try {
      code = (JSON.parse(text) as { code?: string }).code;
    } catch {}
    return { what, status: res.status, ...(code ? { code } : {}), retryAfter: res.headers.get('retry-after') };
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause;
    return { what, error: cause?.code ?? String(err) };
  }
}

let fake: FakeServer;
const tmp = tempDir('baton-graceful-');
/** Per test: the call delay, and a hook run when a request arrives (used to send SIGTERM mid-call). */
let replyDelayMs = 500;
let onRequest: ((request: RecordedRequest, index: number) => void) | undefined;
const answeredAt = new Map<string, number>();

beforeAll(async () => {
  fake = await startFakeAnthropic({
    defaultReply: async (request) => {
      const k = callKey(request);
      onRequest?.(request, fake.requests.indexOf(request));
      await sleep(replyDelayMs);
      answeredAt.set(k, Date.now());
      return { body: textMessage(answerFor(k)) };
    },
  });
});
afterEach(async () => {
  await stopAllServers();
  onRequest = undefined;
});
afterAll(async () => {
  await stopAllServers();
  await fake?.close();
  tmp.cleanup();
});

describe('graceful shutdown (SIGTERM)', () => {
  it('finishes in-flight calls, answers 503 while draining, exits 0, and resumes without duplicate calls', {
    timeout: 40_000,
  }, async () => {
    const graceMs = 4_000;
    replyDelayMs = 500;
    const dbPath = tmp.dbPath('drain.db');
    const env = { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: fake.url };
    const first = await startServer({ dbPath, env, shutdownGraceMs: graceMs });
    const startIndex = fake.requests.length;
    const tags = Array.from({ length: 6 }, (_, i) => `drain${i}-${Math.random().toString(36).slice(2, 7)}`);

    // SIGTERM the moment the first step-2 call arrives: every step-1 has completed by then, and
    // that call (with its siblings) has the whole reply delay still to run.
    let sigtermAt = 0;
    onRequest = (request) => {
      if (sigtermAt === 0 && callKey(request).endsWith('step-2')) {
        sigtermAt = Date.now();
        first.kill('SIGTERM');
      }
    };
    const idToTag = await submit(first, tags);
    const ids = [...idToTag.keys()];

    await waitFor('the SIGTERM', () => sigtermAt > 0, 10_000, 5);
    await waitFor('the shutdown log line', () => first.logs.some((l) => l.includes('shutting down')), 5_000, 5);
    const drainSeenAt = Date.now();
    // Requests arriving while draining: 503 (or refused once the listener is closed).
    const probes: Probe[] = [];
    while (!first.hasExited) {
      probes.push(
        ...(await Promise.all([
          probe(`${first.url}/v1/workflows`, 'POST /v1/workflows', {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(definition('late')),
          }),
          probe(`${first.url}/v1/workflows/${ids[0]}`, 'GET /v1/workflows/:id'),
          probe(`${first.url}/readyz`, 'GET /readyz'),
        ])),
      );
      await sleep(25);
    }
    const exit = await first.exited;
    const exitedAt = Date.now();
    const inFlightAtTerm = fake.requests.slice(startIndex).filter((r) => r.at <= sigtermAt + 50);

    expect(exit).toEqual({ code: 0, signal: null });
    expect(exitedAt - sigtermAt).toBeLessThan(graceMs + 2_000);
    // It waited for the call in flight at SIGTERM rather than cutting it off.
    expect(exitedAt - sigtermAt).toBeGreaterThanOrEqual(replyDelayMs - 100);
    expect(first.logs.some((l) => l.includes('stopped cleanly'))).toBe(true);

    expect(probes.length).toBeGreaterThan(0);
    const answered = probes.filter((p): p is Extract<Probe, { status: number }> => 'status' in p);
    const refused = probes.filter((p): p is Extract<Probe, { error: string }> => 'error' in p);
    expect(answered.length, JSON.stringify(probes)).toBeGreaterThan(0);
    for (const p of answered) expect(p.status, JSON.stringify(p)).toBe(503);
    // The service's own drain answer, also while the server closes (never fastify's generic one).
    const draining = answered.filter((p) => p.code === 'SHUTTING_DOWN');
    expect(draining.length, JSON.stringify(probes)).toBeGreaterThan(0);
    expect(draining.length, JSON.stringify(probes)).toBe(answered.length);
    for (const p of draining) expect(p.retryAfter, p.what).toBe(String(graceMs / 1000));
    expect(new Set(draining.map((p) => p.what))).toEqual(
      new Set(['POST /v1/workflows', 'GET /v1/workflows/:id', 'GET /readyz']),
    );
    for (const p of refused) expect(['ECONNREFUSED', 'ECONNRESET', 'UND_ERR_SOCKET'], p.what).toContain(p.error);

    // Every call made before the exit finished and was committed: no node was left half-done.
    const before = fake.requests.slice(startIndex);
    const atExit = nodeStatuses(dbPath, idToTag);
    expect(atExit.size).toBe(tags.length * STEPS);
    for (const request of before) {
      const k = callKey(request);
      expect(atExit.get(k)?.status, `${k} was called before the exit`).toBe('completed');
      expect(answeredAt.get(k), `${k} was answered`).toBeLessThanOrEqual(exitedAt);
    }
    const completedBefore = [...atExit].filter(([, n]) => n.status === 'completed').map(([k]) => k);
    // All step-1 nodes, plus the step-2 calls that were in flight at the SIGTERM.
    expect(completedBefore.length).toBeGreaterThanOrEqual(tags.length + 1);
    expect(completedBefore.length).toBe(before.length);
    expect(completedBefore.length).toBeLessThan(tags.length * STEPS);
    expect(inFlightAtTerm.some((r) => callKey(r).endsWith('step-2'))).toBe(true);
    // No new call started once the shutdown began (beyond what was already on the wire).
    expect(before.filter((r) => r.at > drainSeenAt + 100).map(callKey)).toEqual([]);

    // Restart on the same database: everything completes, and nothing runs twice.
    onRequest = undefined;
    const cut = fake.requests.length;
    const second = await startServer({ dbPath, env, shutdownGraceMs: graceMs });
    const views = await waitAllTerminal(second, ids);
    for (const view of views) {
      expect(view.status).toBe('completed');
      expect(view.output).toBe(answerFor(`${idToTag.get(view.id)} step-${STEPS}`));
      for (const node of view.tree.children) expect(node.attempts, `${idToTag.get(view.id)} ${node.name}`).toBe(1);
    }
    const afterCounts = countByKey(fake.requests.slice(cut));
    for (const k of completedBefore) expect(afterCounts.has(k), `${k} called again after the restart`).toBe(false);
    for (const [k, n] of afterCounts) expect(n, k).toBe(1);
    expect(afterCounts.size).toBe(tags.length * STEPS - completedBefore.length);
    // The POSTs refused during shutdown created nothing.
    const list = (await (await fetch(`${second.url}/v1/workflows?limit=100`)).json()) as { items: unknown[] };
    expect(list.items).toHaveLength(tags.length);
    expect(errorRecords(first)).toEqual([]);
    expect(errorRecords(second)).toEqual([]);
  });

  it('aborts calls still running when the grace period ends, exits 0, and runs them again after a restart', {
    timeout: 40_000,
  }, async () => {
    const graceMs = 300;
    replyDelayMs = 3_000;
    const dbPath = tmp.dbPath('abort.db');
    const env = { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: fake.url };
    const first = await startServer({ dbPath, env, shutdownGraceMs: graceMs });
    const startIndex = fake.requests.length;
    const tags = Array.from({ length: 3 }, (_, i) => `abort${i}-${Math.random().toString(36).slice(2, 7)}`);
    const idToTag = await submit(first, tags);
    const ids = [...idToTag.keys()];

    await waitFor('three step-1 calls in flight', () => fake.requests.length - startIndex >= 3, 10_000, 5);
    const sigtermAt = Date.now();
    first.kill('SIGTERM');
    const exit = await first.exited;
    const exitedAt = Date.now();
    expect(exit).toEqual({ code: 0, signal: null });
    expect(exitedAt - sigtermAt).toBeLessThan(graceMs + 1_500);

    // The aborted nodes are not failed: they stay resumable.
    const atExit = nodeStatuses(dbPath, idToTag);
    const completedBefore = [...atExit].filter(([, n]) => n.status === 'completed').map(([k]) => k);
    expect(completedBefore).toEqual([]);
    const failed = [...atExit].filter(([, n]) => n.status === 'failed' || n.status === 'cancelled');
    expect(failed).toEqual([]);
    const db = new Database(dbPath, { readonly: true, fileMustExist: true });
    const statuses = db.prepare('SELECT status FROM workflows').all() as Array<{ status: string }>;
    db.close();
    expect(statuses.map((s) => s.status).sort()).toEqual(['running', 'running', 'running']);

    replyDelayMs = 100;
    const cut = fake.requests.length;
    const second = await startServer({ dbPath, env, shutdownGraceMs: graceMs });
    const views = await waitAllTerminal(second, ids);
    for (const view of views) expect(view.status).toBe('completed');
    const beforeCounts = countByKey(fake.requests.slice(startIndex, cut));
    const afterCounts = countByKey(fake.requests.slice(cut));
    expect(beforeCounts.size).toBe(3);
    // The aborted step-1 calls run once more (the one duplicate docs/design.md#execution allows), the rest once.
    for (const tag of tags) {
      expect(beforeCounts.get(`${tag} step-1`)).toBe(1);
      for (let s = 1; s <= STEPS; s++) expect(afterCounts.get(`${tag} step-${s}`), `${tag} step-${s}`).toBe(1);
    }
    expect(fake.requests.length - cut).toBe(tags.length * STEPS);
    expect(errorRecords(first)).toEqual([]);
    expect(errorRecords(second)).toEqual([]);
  });
});
