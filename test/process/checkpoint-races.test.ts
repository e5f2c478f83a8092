import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { reportFigures, scale } from '../support/scale.js';
import { errorRecords, type ServerProcess, startServer, stopAllServers, tempDir } from '../support/server-process.js';

/**
 * Human checkpoint decisions raced over real sockets (docs/workflows.md#complexity-routing-and-human-checkpoints): an approval sent the moment the workflow is created is never lost, approve and
 * reject racing have one winner (the loser is told the true reason), and a decision racing a cancel
 * leads to exactly one execution, with no error in the log.
 */

const SEQUENTIAL = scale(100, 500);
const PARALLEL = scale(40, 200);
const TRIALS = scale(30, 150);

const tmp = tempDir('baton-checkpoint-');
let server: ServerProcess;
let base: string;
/** Error records logged before the current test: each test asserts it added none. */
let errorsBefore = 0;
const newErrors = () => errorRecords(server).slice(errorsBefore);
beforeAll(async () => {
  // The service as its own process over a file database, as a client meets it: the client's next
  // request is not held back by the server's event loop.
  server = await startServer({ dbPath: tmp.dbPath(), env: { RATE_LIMIT_PER_MINUTE: '0' } });
  base = server.url;
});
afterAll(async () => {
  await stopAllServers();
  tmp.cleanup();
});
beforeEach(() => {
  errorsBefore = errorRecords(server).length;
});

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

async function request(method: 'GET' | 'POST', path: string, body?: unknown): Promise<Answer> {
  const res = await fetch(`${base}${path}`, {
    method,
    ...(method === 'POST' ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body ?? {}) } : {}),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function submitCritical(n: number): Promise<string> {
  const res = await request('POST', '/v1/workflows', {
    name: `critical-${n}`,
    task: { type: 'migration', complexity: 'critical' },
    agents: { dev: { model: 'sim/haiku' } },
    root: { type: 'prompt', name: 'plan', agent: 'dev', user: 'Plan it.' },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return res.body.id as string;
}

const approve = (id: string) => request('POST', `/v1/workflows/${id}/approve`, { note: 'go' });
const reject = (id: string) => request('POST', `/v1/workflows/${id}/reject`, { reason: 'freeze' });
const cancel = (id: string) => request('POST', `/v1/workflows/${id}/cancel`);

async function eventTypes(id: string): Promise<string[]> {
  const page = await request('GET', `/v1/workflows/${id}/events?limit=1000`);
  return (page.body.items as Array<{ type: string }>).map((e) => e.type);
}

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

/**
 * Waits until each workflow has ended and answers the final views, and the ids still not ended at
 * the deadline (which only turns a lost decision, a workflow left idle forever, into a failure).
 */
async function waitForEnd(ids: string[], timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  const views = new Map<string, Record<string, unknown>>();
  for (;;) {
    for (const id of ids) {
      if (views.has(id)) continue;
      const view = (await request('GET', `/v1/workflows/${id}`)).body;
      if (TERMINAL.has(view.status as string)) views.set(id, view);
    }
    if (views.size === ids.length || Date.now() > deadline) {
      return { views: [...views.values()], stuck: ids.filter((id) => !views.has(id)) };
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The final view of one workflow, failing when it never ends. */
async function ended(id: string): Promise<Record<string, unknown>> {
  const { views, stuck } = await waitForEnd([id]);
  expect(stuck, `${id} never ended`).toEqual([]);
  return views[0] as Record<string, unknown>;
}

/** One execution: the run started and ended once (a second one would add its own pair, or an error). */
async function expectOneExecution(id: string): Promise<void> {
  const types = await eventTypes(id);
  expect(
    types.filter((type) => type === 'workflowStart'),
    `${id}: ${types.join(',')}`,
  ).toHaveLength(1);
  expect(
    types.filter((type) => type === 'workflowEnd'),
    `${id}: ${types.join(',')}`,
  ).toHaveLength(1);
}

describe('checkpoint decisions under races', () => {
  it(`${SEQUENTIAL} sequential and ${PARALLEL} parallel approvals sent right after submission all run`, {
    timeout: 120_000,
  }, async () => {
    const sequential: string[] = [];
    for (let n = 0; n < SEQUENTIAL; n++) {
      const id = await submitCritical(n);
      const approved = await approve(id);
      expect(approved.status, JSON.stringify(approved.body)).toBe(202);
      sequential.push(id);
    }
    const parallel = await Promise.all(
      Array.from({ length: PARALLEL }, async (_, n) => {
        const id = await submitCritical(SEQUENTIAL + n);
        const approved = await approve(id);
        expect(approved.status, JSON.stringify(approved.body)).toBe(202);
        return id;
      }),
    );
    const { views, stuck } = await waitForEnd([...sequential, ...parallel]);
    const lost = {
      sequential: stuck.filter((id) => sequential.includes(id)).length,
      parallel: stuck.filter((id) => parallel.includes(id)).length,
    };
    expect(lost, `approved but left idle: ${stuck.join(', ')}`).toEqual({ sequential: 0, parallel: 0 });
    expect(views.filter((view) => view.status !== 'completed')).toEqual([]);
    for (const id of [...sequential.slice(0, 10), ...parallel.slice(0, 10)]) await expectOneExecution(id);
    expect(newErrors()).toEqual([]);
    reportFigures('checkpoint-approve-at-once', {
      sequential: SEQUENTIAL,
      parallel: PARALLEL,
      completed: views.length,
    });
  });

  it(`approve and reject racing (${TRIALS} trials): one 202, the other 409 with the true reason`, {
    timeout: 120_000,
  }, async () => {
    const wins = { approved: 0, rejected: 0 };
    for (let trial = 0; trial < TRIALS; trial++) {
      const id = await submitCritical(trial);
      // Half the trials race the moment the workflow exists, half once its wait is announced.
      if (trial % 2 === 1) await settledWait(id);
      // Which request leaves first alternates too, so either may win.
      const [approved, rejected] =
        Math.floor(trial / 2) % 2 === 0
          ? await Promise.all([approve(id), reject(id)])
          : await Promise.all([reject(id), approve(id)]).then(([r, a]) => [a, r] as const);
      const statuses = [approved.status, rejected.status].sort();
      expect(statuses, `trial ${trial}: ${JSON.stringify([approved.body, rejected.body])}`).toEqual([202, 409]);
      const winner = approved.status === 202 ? 'approved' : 'rejected';
      const [won, lost] = winner === 'approved' ? [approved, rejected] : [rejected, approved];
      wins[winner] += 1;
      expect(won.body.checkpoint).toMatchObject({ state: winner });
      expect(lost.body).toMatchObject({ code: 'CONFLICT' });
      expect(lost.body.message).toBe(`workflow ${id} is not waiting for approval: it was already ${winner}`);
      const view = await ended(id);
      if (winner === 'approved') expect(view.status).toBe('completed');
      else expect(view).toMatchObject({ status: 'failed', error: { code: 'CHECKPOINT_REJECTED' } });
      expect(view.checkpoint).toMatchObject({ state: winner });
      await expectOneExecution(id);
    }
    expect(newErrors()).toEqual([]);
    reportFigures('checkpoint-approve-vs-reject', { trials: TRIALS, ...wins });
  });

  it(`a decision racing a cancel (${TRIALS} trials) leads to exactly one execution`, {
    timeout: 120_000,
  }, async () => {
    const outcomes = { decisionWon: 0, cancelWon: 0 };
    for (let trial = 0; trial < TRIALS; trial++) {
      const id = await submitCritical(trial);
      if (trial % 2 === 1) await settledWait(id);
      const decide = trial % 8 < 4 ? approve : reject;
      const [decided, cancelled] =
        Math.floor(trial / 2) % 2 === 0
          ? await Promise.all([decide(id), cancel(id)])
          : await Promise.all([cancel(id), decide(id)]).then(([c, d]) => [d, c] as const);
      // The cancel is refused only when the decision won and the workflow already ended.
      if (cancelled.status !== 202) {
        expect([decided.status, cancelled.body.code], JSON.stringify(cancelled.body)).toEqual([
          202,
          'WORKFLOW_TERMINAL',
        ]);
      }
      if (decided.status === 202) outcomes.decisionWon += 1;
      else {
        outcomes.cancelWon += 1;
        expect(decided.status, JSON.stringify(decided.body)).toBe(409);
        expect(decided.body.message).toBe(`workflow ${id} is not waiting for approval: it is cancelled`);
      }
      const view = await ended(id);
      // A lost decision leaves the cancel to end it; a won one may still finish before the cancel lands.
      const allowed =
        decided.status === 202 ? ['cancelled', decide === approve ? 'completed' : 'failed'] : ['cancelled'];
      expect(allowed, JSON.stringify(view)).toContain(view.status);
      await expectOneExecution(id);
    }
    expect(newErrors()).toEqual([]);
    reportFigures('checkpoint-decision-vs-cancel', { trials: TRIALS, ...outcomes });
  });

  it('approving or rejecting a cancelled workflow answers 409 saying it is cancelled', async () => {
    const id = await submitCritical(0);
    await settledWait(id);
    expect((await cancel(id)).status).toBe(202);
    expect((await ended(id)).status).toBe('cancelled');
    for (const answer of [await approve(id), await reject(id)]) {
      expect(answer.status).toBe(409);
      expect(answer.body).toMatchObject({
        code: 'CONFLICT',
        message: `workflow ${id} is not waiting for approval: it is cancelled`,
      });
    }
  });
});

/** Resolves once the run has announced the wait (its `checkpoint` event is stored). */
async function settledWait(id: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await eventTypes(id)).includes('checkpoint')) {
    if (Date.now() > deadline) throw new Error(`${id} never announced its checkpoint`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
