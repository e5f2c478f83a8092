import { describe, expect, it } from 'vitest';
import { type RecordedRequest, textMessage } from '../support/fake-anthropic.js';
import { fakeAnthropicSuite } from '../support/fake-anthropic-suite.js';
import {
  type EventStream,
  type Outcome,
  openEventStream,
  pausedRead,
  refused,
  slowUpload,
} from '../support/http-client.js';
import {
  callIdentity,
  countByIdentity,
  countRows,
  promptNodes,
  waitAllTerminal,
  workflowStatuses,
} from '../support/process-calls.js';
import { expectedOutput, sequenceDefinition } from '../support/process-workload.js';
import { reportFigures } from '../support/scale.js';
import { errorRecords, type ServerProcess, startServer, waitFor } from '../support/server-process.js';
import { expectDrainAnswer, keepAliveLoop, postJson, probeUntilExit } from '../support/shutdown-traffic.js';

/**
 * Graceful shutdown (README; docs/design.md#execution, #http-api-conventions), the real server as
 * a child process. On SIGTERM (or SIGINT) the service answers 503 SHUTTING_DOWN to new requests
 * (liveness excepted), gives whole answers to requests it received before the signal (never a
 * reset), lets in-flight LLM calls finish within SHUTDOWN_GRACE_MS and aborts the rest (left
 * resumable), commits, and exits 0; at the next start on the same database everything resumes
 * without calling a completed node again. The checks follow the order of events (the signal, the
 * "shutting down" log line, the exit) read from the fake's request log and the database file.
 */

const STEPS = 3;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const answerFor = (identity: string) => String(expectedOutput(identity));
const randomTag = (prefix: string) => `${prefix}-${Math.random().toString(36).slice(2, 7)}`;

const suite = fakeAnthropicSuite('baton-shutdown-', { stopServersAfterEach: true });

/** Submits one workflow per definition (each must be accepted): their ids, in order. */
async function submit(server: ServerProcess, definitions: readonly unknown[]): Promise<string[]> {
  return Promise.all(
    definitions.map(async (definition) => {
      const res = await fetch(`${server.url}/v1/workflows`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(definition),
      });
      expect(res.status).toBe(202);
      return ((await res.json()) as { id: string }).id;
    }),
  );
}

const completedNodes = (dbPath: string) =>
  [...promptNodes(dbPath)].filter(([, n]) => n.status === 'completed').map(([k]) => k);

describe('SIGTERM with LLM calls in flight', () => {
  it('finishes in-flight calls, answers 503 while draining, exits 0, and resumes without duplicate calls', {
    timeout: 40_000,
  }, async () => {
    const graceMs = 4_000;
    const replyDelayMs = 500;
    const dbPath = suite.tmp.dbPath('drain.db');
    const first = await startServer({ dbPath, env: suite.env(), shutdownGraceMs: graceMs });
    const startIndex = suite.fake.requests.length;
    const tags = Array.from({ length: 6 }, (_, i) => randomTag(`drain${i}`));

    // SIGTERM the moment the first step-2 call arrives: every step-1 has completed by then, and
    // that call (with its siblings) has the whole reply delay still to run.
    let sigtermAt = 0;
    const answeredAt = new Map<string, number>();
    suite.fake.setDefault(async (request) => {
      const k = callIdentity(request);
      if (sigtermAt === 0 && k.endsWith('step-2')) {
        sigtermAt = Date.now();
        first.kill('SIGTERM');
      }
      await sleep(replyDelayMs);
      answeredAt.set(k, Date.now());
      return { body: textMessage(answerFor(k)) };
    });
    const ids = await submit(
      first,
      tags.map((tag) => sequenceDefinition('graceful', tag, STEPS)),
    );

    await waitFor('the SIGTERM', () => sigtermAt > 0, 10_000, 5);
    await waitFor('the shutdown log line', () => first.logs.some((l) => l.includes('shutting down')), 5_000, 5);
    const drainSeenAt = Date.now();
    // Requests arriving while draining: 503 (or refused once the listener is closed).
    const drainRequests = [
      postJson('/v1/workflows', sequenceDefinition('graceful', 'late', STEPS)),
      { path: `/v1/workflows/${ids[0]}` },
      { path: '/readyz' },
    ];
    const probes = await probeUntilExit(first, drainRequests, 25);
    const exit = await first.exited;
    const exitedAt = Date.now();
    const inFlightAtTerm = suite.fake.requests.slice(startIndex).filter((r) => r.at <= sigtermAt + 50);

    expect(exit).toEqual({ code: 0, signal: null });
    expect(exitedAt - sigtermAt).toBeLessThan(graceMs + 2_000);
    // It waited for the call in flight at SIGTERM rather than cutting it off.
    expect(exitedAt - sigtermAt).toBeGreaterThanOrEqual(replyDelayMs - 100);
    expect(first.logs.some((l) => l.includes('stopped cleanly'))).toBe(true);

    expect(probes.length).toBeGreaterThan(0);
    const answered = probes.filter((p) => p.status !== undefined);
    expect(answered.length, JSON.stringify(probes)).toBeGreaterThan(0);
    // The service's own drain answer, also while the server closes (never fastify's generic one).
    for (const p of answered) expectDrainAnswer(p, graceMs);
    expect(new Set(answered.map((p) => p.path))).toEqual(new Set(drainRequests.map((r) => r.path)));
    for (const p of probes.filter((x) => x.error !== undefined)) {
      expect(['ECONNREFUSED', 'ECONNRESET'], p.path).toContain(p.error?.split(' ')[0]);
    }

    // Every call made before the exit finished and was committed: no node was left half-done.
    const before = suite.fake.requests.slice(startIndex);
    const atExit = promptNodes(dbPath);
    expect(atExit.size).toBe(tags.length * STEPS);
    for (const request of before) {
      const k = callIdentity(request);
      expect(atExit.get(k)?.status, `${k} was called before the exit`).toBe('completed');
      expect(answeredAt.get(k), `${k} was answered`).toBeLessThanOrEqual(exitedAt);
    }
    const completedBefore = completedNodes(dbPath);
    // All step-1 nodes, plus the step-2 calls that were in flight at the SIGTERM.
    expect(completedBefore.length).toBeGreaterThanOrEqual(tags.length + 1);
    expect(completedBefore.length).toBe(before.length);
    expect(completedBefore.length).toBeLessThan(tags.length * STEPS);
    expect(inFlightAtTerm.some((r) => callIdentity(r).endsWith('step-2'))).toBe(true);
    // No new call started once the shutdown began (beyond what was already on the wire).
    expect(before.filter((r) => r.at > drainSeenAt + 100).map(callIdentity)).toEqual([]);

    // Restart on the same database: everything completes, and nothing runs twice.
    const cut = suite.fake.requests.length;
    const second = await startServer({ dbPath, env: suite.env(), shutdownGraceMs: graceMs });
    const views = await waitAllTerminal(second, ids, 15_000);
    for (const [i, view] of views.entries()) {
      expect(view.status).toBe('completed');
      expect(view.output).toBe(answerFor(`${tags[i]} step-${STEPS}`));
      for (const node of view.tree.children) expect(node.attempts, `${tags[i]} ${node.name}`).toBe(1);
    }
    const afterCounts = countByIdentity(suite.fake.requests.slice(cut));
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
    let replyDelayMs = 3_000;
    suite.fake.setDefault((request) => ({
      body: textMessage(answerFor(callIdentity(request))),
      delayMs: replyDelayMs,
    }));
    const dbPath = suite.tmp.dbPath('abort.db');
    const first = await startServer({ dbPath, env: suite.env(), shutdownGraceMs: graceMs });
    const startIndex = suite.fake.requests.length;
    const tags = Array.from({ length: 3 }, (_, i) => randomTag(`abort${i}`));
    const ids = await submit(
      first,
      tags.map((tag) => sequenceDefinition('graceful', tag, STEPS)),
    );

    await waitFor('three step-1 calls in flight', () => suite.fake.requests.length - startIndex >= 3, 10_000, 5);
    const sigtermAt = Date.now();
    first.kill('SIGTERM');
    const exit = await first.exited;
    const exitedAt = Date.now();
    expect(exit).toEqual({ code: 0, signal: null });
    expect(exitedAt - sigtermAt).toBeLessThan(graceMs + 1_500);

    // The aborted nodes are not failed: they stay resumable.
    const atExit = promptNodes(dbPath);
    expect(completedNodes(dbPath)).toEqual([]);
    const failed = [...atExit].filter(([, n]) => n.status === 'failed' || n.status === 'cancelled');
    expect(failed).toEqual([]);
    expect(workflowStatuses(dbPath).sort()).toEqual(['running', 'running', 'running']);

    replyDelayMs = 100;
    const cut = suite.fake.requests.length;
    const second = await startServer({ dbPath, env: suite.env(), shutdownGraceMs: graceMs });
    const views = await waitAllTerminal(second, ids, 15_000);
    for (const view of views) expect(view.status).toBe('completed');
    const beforeCounts = countByIdentity(suite.fake.requests.slice(startIndex, cut));
    const afterCounts = countByIdentity(suite.fake.requests.slice(cut));
    expect(beforeCounts.size).toBe(3);
    // The aborted step-1 calls run once more (the one duplicate docs/design.md#execution allows), the rest once.
    for (const tag of tags) {
      expect(beforeCounts.get(`${tag} step-1`)).toBe(1);
      for (let s = 1; s <= STEPS; s++) expect(afterCounts.get(`${tag} step-${s}`), `${tag} step-${s}`).toBe(1);
    }
    expect(suite.fake.requests.length - cut).toBe(tags.length * STEPS);
    expect(errorRecords(first)).toEqual([]);
    expect(errorRecords(second)).toEqual([]);
  });
});

describe('SIGTERM under load', () => {
  it('answers every request written before SIGTERM, 503s the rest properly, never resets, exits 0', {
    timeout: 60_000,
  }, async () => {
    const graceMs = 8_000;
    const callMs = 4_000;
    const dbPath = suite.tmp.dbPath('keep-alive.db');
    const server = await startServer({ dbPath, shutdownGraceMs: graceMs });
    // A model call in flight at SIGTERM keeps the executor draining for a few seconds: the window
    // in which the listener must keep answering 503 rather than resetting.
    const slow = await fetch(`${server.url}/v1/workflows`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'in-flight',
        agents: { a: { model: 'sim/haiku', simulate: { latencyMs: callMs, responses: [{ text: 'done' }] } } },
        root: { type: 'prompt', name: 'slow', agent: 'a', user: 'take your time' },
      }),
    });
    expect(slow.status).toBe(202);
    const submittedAt = Date.now();
    const slowNodes = (status: string) =>
      countRows(dbPath, `SELECT count(*) FROM nodes WHERE name = 'slow' AND status = '${status}'`);

    const outcomes: Outcome[] = [];
    let sigtermAt = 0;
    let slowRunningAtSignal = 0;
    let exitedAt = 0;
    void server.exited.then(() => {
      exitedAt = Date.now();
    });
    // Mid-stream: after a few hundred answers, or 1.5 s on a slow machine.
    const maybeSignal = () => {
      if (sigtermAt === 0 && (outcomes.length >= 400 || Date.now() - submittedAt > 1_500)) {
        slowRunningAtSignal = slowNodes('running');
        sigtermAt = Date.now();
        server.kill('SIGTERM');
      }
    };
    // Eight keep-alive connections, each firing its next request as soon as the last is answered.
    const pathOf = (n: number) => (i: number) => ((n + i) % 2 === 0 ? '/healthz' : '/v1/workflows?limit=5');
    await Promise.all(Array.from({ length: 8 }, (_, n) => keepAliveLoop(server, pathOf(n), outcomes, maybeSignal)));
    const exit = await server.exited;

    expect(exit).toEqual({ code: 0, signal: null });
    expect(errorRecords(server)).toEqual([]);
    // The signal came while the call was in flight, and the process waited for it.
    expect(slowRunningAtSignal).toBe(1);
    expect(slowNodes('completed')).toBe(1);
    expect(exitedAt - submittedAt).toBeGreaterThanOrEqual(callMs - 100);

    const before = outcomes.filter((o) => o.writtenAt !== undefined && o.writtenAt < sigtermAt);
    const after = outcomes.filter((o) => !before.includes(o));
    const failed = (list: Outcome[]) => list.filter((o) => o.error !== undefined);
    const summary = {
      total: outcomes.length,
      before: before.length,
      after: after.length,
      after503: after.filter((o) => o.status === 503).length,
      afterRefused: after.filter(refused).length,
      beforeErrors: failed(before).map((o) => o.error),
      afterErrors: failed(after)
        .filter((o) => !refused(o))
        .map((o) => `${o.error} (${o.reused ? 'kept-alive' : 'fresh'} socket)`),
      exitMs: exitedAt - sigtermAt,
    };
    console.log('shutdown under load', JSON.stringify(summary));

    // Requests already on the wire get whole answers.
    expect(failed(before), JSON.stringify(summary)).toEqual([]);
    // Later ones: answered, or refused once the listener is closed — never reset or hung up.
    expect(summary.afterErrors, JSON.stringify(summary)).toEqual([]);
    // The drain answer is the service's own: JSON, SHUTTING_DOWN, retry-after, connection: close.
    const unavailable = outcomes.filter((o) => o.status === 503);
    expect(unavailable.length, JSON.stringify(summary)).toBeGreaterThan(10);
    for (const o of unavailable) {
      expectDrainAnswer(o, graceMs);
      expect(o.headers?.connection).toBe('close');
    }
    for (const o of outcomes.filter((x) => x.status !== undefined && x.status !== 503)) {
      expect(o.status, `${o.path}: ${o.body}`).toBe(200);
    }
    // Once a 503 has been seen the service is draining: whatever is sent from then on is a 503,
    // except liveness, which still answers 200, and closes its connection too.
    const drainSeenAt = Math.min(...unavailable.map((o) => o.answeredAt ?? Number.POSITIVE_INFINITY));
    const sentWhileDraining = outcomes.filter((o) => o.status !== undefined && (o.writtenAt ?? 0) > drainSeenAt);
    const live = sentWhileDraining.filter((o) => o.path === '/healthz');
    expect(live.length).toBeGreaterThan(0);
    for (const o of live) expect([o.status, o.headers?.connection]).toEqual([200, 'close']);
    for (const o of sentWhileDraining.filter((x) => x.path !== '/healthz')) expect(o.status).toBe(503);
  });

  /**
   * SIGTERM with 50 HTTP requests in flight and 100 workflows running, the real Anthropic
   * SDK against a fake with latency. At the signal the 100 workflows are running: step 2 on the
   * wire (`CONCURRENCY` calls: the even workflows' answer within the grace period, the odd ones'
   * would take far longer and are aborted), or step 1 done and step 2 waiting for a call slot, or
   * (a run that started late) step 1 itself waiting for a slot. The 50 requests in flight are what
   * can really be unanswered at a given moment: 20 event streams of running workflows, 10
   * submissions whose body is still being uploaded, 10 large answers the client has not read yet
   * (on loopback the kernel's socket buffers take them whole, so these check that the exit does not
   * cut what was sent), and 10 keep-alive connections firing GETs back to back at a server busy
   * enough that each has one unanswered at the signal.
   */
  it('with 100 workflows and 50 requests in flight: answers what it received, exits 0 in the grace period, resumes all', {
    timeout: 90_000,
  }, async () => {
    const WORKFLOWS = 100;
    const CONCURRENCY = 64;
    const GRACE_MS = 3_000;
    // SHUTDOWN_GRACE_MS is the whole time from the signal to the exit (README; main.ts keeps up to
    // 1.8 s of it for closing the listener). The slack is what the test process adds: delivering
    // the signal and noticing the child's exit on a loaded machine.
    const EXIT_SLACK_MS = 250;
    const [STREAMS, UPLOADS, SLOW_READS, GET_LOOPS] = [20, 10, 10, 10];
    const isQuick = (tag: string) => Number(tag.slice(1)) % 2 === 0;
    const isStep2 = (r: RecordedRequest) => callIdentity(r).endsWith('step-2');
    const definition = (tag: string) =>
      sequenceDefinition('shutdown-under-load', tag, STEPS, { options: { cache: false } });

    // Phase 1: step 2 takes its time (the quick half's is held until the signal, so that every one
    // is still on the wire when it comes, then answers 800 ms later); phase 2 (after the restart)
    // every call is short.
    let phase: 1 | 2 = 1;
    let signalled = () => {};
    const signal = new Promise<void>((resolve) => {
      signalled = resolve;
    });
    suite.fake.setDefault(async (request) => {
      const key = callIdentity(request);
      const [tag = '', step] = key.split(' ');
      const body = textMessage(answerFor(key));
      if (phase === 2 || step !== 'step-2') return { body, delayMs: 30 };
      if (!isQuick(tag)) return { body, delayMs: 60_000 };
      await signal;
      return { body, delayMs: 800 };
    });

    const dbPath = suite.tmp.dbPath('hundred.db');
    const env = { ...suite.env(), CONCURRENCY: String(CONCURRENCY) };
    const first = await startServer({ dbPath, env, shutdownGraceMs: GRACE_MS, startTimeoutMs: 60_000 });
    const base = new URL(first.url);
    const from = suite.fake.requests.length;
    const tags = Array.from({ length: WORKFLOWS }, (_, i) => `w${i}`);
    const ids = await submit(first, tags.map(definition));

    // Every call slot busy with a step 2. Most step 1s are done by then; a workflow whose run
    // started late can still be before its step 1, waiting for a slot behind the step 2s (seen on
    // Node 24: 67 of 100 step 1s made). Waiting for all of them would wait forever, so the checks
    // below count the calls made rather than assume them.
    const step2Calls = () => suite.fake.requests.slice(from).filter(isStep2).length;
    await waitFor('every call slot busy with a step 2', () => step2Calls() >= Math.min(CONCURRENCY, WORKFLOWS), 20_000);

    // The requests in flight at the signal.
    const streams: Array<{ id: string; stream: EventStream }> = ids
      .slice(0, STREAMS)
      .map((id) => ({ id, stream: openEventStream(base, id) }));
    const uploads = Array.from({ length: UPLOADS }, (_, i) =>
      slowUpload(base, '/v1/workflows', JSON.stringify(definition(`late-upload-${i}`))),
    );
    // Large answers: the OpenAPI document (one buffered write) and the Swagger UI bundle (a file stream).
    const reads = Array.from({ length: SLOW_READS }, (_, i) =>
      pausedRead(base, i % 2 === 0 ? '/openapi.json' : '/docs/static/swagger-ui-bundle.js'),
    );
    await Promise.all([
      ...streams.map(({ stream, id }) =>
        waitFor(`the first frames of ${id}'s stream`, () => stream.parser.events.length > 0, 10_000, 5),
      ),
      ...uploads.map((u) => u.headersSent),
      ...reads.map((r) => r.answering),
    ]);

    // GETs fired back to back on keep-alive connections, until the listener is gone.
    const outcomes: Outcome[] = [];
    const getPath = (n: number) => (i: number) =>
      (n + i) % 3 === 0 ? '/healthz' : `/v1/workflows/${ids[(n * 7 + i) % ids.length]}`;
    const loops = Promise.all(Array.from({ length: GET_LOOPS }, (_, n) => keepAliveLoop(first, getPath(n), outcomes)));
    await waitFor('the GET loops answering', () => outcomes.length >= 5 * GET_LOOPS, 10_000, 5);

    const runningAtSignal = workflowStatuses(dbPath).filter((s) => s === 'running').length;
    const callsAtSignal = suite.fake.requests.length;
    const sigtermAt = Date.now();
    first.kill('SIGTERM');
    signalled();
    let exitedAt = 0;
    const exited = first.exited.then((exit) => {
      exitedAt = Date.now();
      return exit;
    });

    // After the signal: the uploads finish their bodies, the readers start reading, and new
    // requests keep coming until the process is gone.
    await sleep(200);
    for (const upload of uploads) upload.finish();
    for (const read of reads) read.resume();
    const lateProbes = probeUntilExit(
      first,
      [
        postJson('/v1/workflows', definition('late-submit')),
        { path: `/v1/workflows/${ids[0]}` },
        { path: '/readyz' },
        { path: '/healthz' },
      ],
      50,
    );

    const exit = await exited;
    const [, late] = await Promise.all([loops, lateProbes]);
    const uploadAnswers = await Promise.all(uploads.map((u) => u.answer));
    const readAnswers = await Promise.all(reads.map((r) => r.answer));
    const streamEnds = await Promise.all(streams.map(({ stream }) => stream.done));
    const atExit = promptNodes(dbPath);
    const statusesAtExit = workflowStatuses(dbPath);
    const before = suite.fake.requests.slice(from, callsAtSignal);
    const shutdownAt = Number(first.records().find((r) => r.msg === 'shutting down: new requests get 503')?.time);

    // --- Restart on the same database.
    phase = 2;
    const cut = suite.fake.requests.length;
    const restartedAt = Date.now();
    const second = await startServer({ dbPath, env, shutdownGraceMs: GRACE_MS, startTimeoutMs: 60_000 });
    const listeningAfterMs = Date.now() - restartedAt;
    await waitFor(
      'every workflow terminal after the restart',
      () => workflowStatuses(dbPath).every((s) => s !== 'running' && s !== 'idle'),
      60_000,
      50,
    );
    const resumedInMs = Date.now() - restartedAt;
    const views = await waitAllTerminal(second, ids, 10_000);
    // Each interrupted stream resumes from the last event it saw, through to workflowEnd.
    const resumed = await Promise.all(
      streams.map(async ({ id, stream }) => {
        const again = openEventStream(new URL(second.url), id, { lastEventId: stream.parser.events.at(-1)?.id ?? '0' });
        const end = await again.done;
        const json = (await (await fetch(`${second.url}/v1/workflows/${id}/events?limit=1000`)).json()) as {
          items: Array<{ seq: number; type: string }>;
        };
        return { id, first: stream, again, end, all: json.items };
      }),
    );
    const afterCounts = countByIdentity(suite.fake.requests.slice(cut));
    const workflowsAfter = workflowStatuses(dbPath).length;

    // --- Figures.
    const written = outcomes.filter((o) => o.writtenAt !== undefined && o.writtenAt < sigtermAt);
    const unansweredAtSignal = written.filter((o) => o.answeredAt === undefined || o.answeredAt > sigtermAt);
    const lateRequests = [...late, ...outcomes.filter((o) => !written.includes(o))];
    const completedAtExit = [...atExit].filter(([, n]) => n.status === 'completed').map(([k]) => k);
    reportFigures('shutdown', {
      workflows: WORKFLOWS,
      runningAtSignal,
      callsOnTheWireAtSignal: before.filter(isStep2).length,
      step1sMadeAtSignal: before.filter((r) => !isStep2(r)).length,
      inFlightAtSignal: {
        streams: STREAMS,
        uploads: UPLOADS,
        slowReads: SLOW_READS,
        keepAliveGets: unansweredAtSignal.length,
      },
      getsAnsweredBeforeSignal: written.length - unansweredAtSignal.length,
      signalHandledAfterMs: shutdownAt - sigtermAt,
      lateRequests: lateRequests.length,
      late503: lateRequests.filter((o) => o.status === 503).length,
      lateRefused: lateRequests.filter(refused).length,
      lateOtherErrors: lateRequests.filter((o) => o.error !== undefined && !refused(o)).length,
      exitMs: exitedAt - sigtermAt,
      graceMs: GRACE_MS,
      nodesCompletedAtExit: completedAtExit.length,
      callsAfterRestart: suite.fake.requests.length - cut,
      listeningAfterMs,
      resumedInMs,
    });

    // --- The process: exit 0 within the grace period (plus closing the listener), no error logged.
    expect(exit).toEqual({ code: 0, signal: null });
    expect(exitedAt - sigtermAt).toBeLessThan(GRACE_MS + EXIT_SLACK_MS);
    expect(errorRecords(first)).toEqual([]);

    // --- The engine. At the signal: every workflow running, every slot busy with a step 2, and
    // no step 2 beyond the slots (the one step 1 calls only: each workflow's, at most once).
    expect(runningAtSignal).toBe(WORKFLOWS);
    expect(before.filter(isStep2).length).toBe(CONCURRENCY);
    const step1sBefore = before.filter((r) => !isStep2(r)).map(callIdentity);
    expect(
      step1sBefore.every((key) => key.endsWith('step-1')),
      step1sBefore.join(),
    ).toBe(true);
    expect(new Set(step1sBefore).size).toBe(step1sBefore.length);
    expect(step1sBefore.length).toBeGreaterThanOrEqual(CONCURRENCY);
    // No call started after the signal (a call waiting for a slot included).
    const startedLate = suite.fake.requests.slice(callsAtSignal, cut).filter((r) => r.at > shutdownAt + 100);
    expect(startedLate.map(callIdentity)).toEqual([]);
    // The calls answered within the grace period were committed, the aborted ones left resumable.
    for (const request of before) {
      const key = callIdentity(request);
      const answeredInTime = !key.endsWith('step-2') || isQuick(key.split(' ')[0] ?? '');
      expect(atExit.get(key)?.status, key).toBe(answeredInTime ? 'completed' : 'running');
    }
    const calledBefore = new Set(before.map(callIdentity));
    for (const key of completedAtExit) expect(calledBefore.has(key), `${key} completed without a call`).toBe(true);
    expect(statusesAtExit.filter((s) => s !== 'running')).toEqual([]);

    // --- Requests received before the signal: whole answers, never a reset.
    expect(written.length).toBeGreaterThan(0);
    for (const o of written) {
      expect(o.error, `${o.path} written before the signal`).toBeUndefined();
      expect(o.status, o.path).toBe(200);
    }
    for (const answer of readAnswers) {
      expect(answer.error, answer.path).toBeUndefined();
      expect(answer.status, answer.path).toBe(200);
      expect(answer.bytes, answer.path).toBeGreaterThan(100_000);
      if (answer.contentLength !== undefined) expect(answer.bytes, answer.path).toBe(answer.contentLength);
      if (answer.path === '/openapi.json') expect(() => JSON.parse(answer.body ?? '')).not.toThrow();
    }
    // An upload whose body is whole only after the signal is new work the service no longer
    // takes: a whole 503, and nothing created (checked after the restart).
    for (const answer of uploadAnswers) {
      expect(answer.error, answer.path).toBeUndefined();
      expectDrainAnswer(answer, GRACE_MS);
    }
    // Streams end cleanly, every frame whole; the workflows they follow resume at the next start.
    for (const [i, end] of streamEnds.entries()) {
      expect(end, streams[i]?.id).toMatchObject({ ended: true });
      expect(streams[i]?.stream.parser.rest, streams[i]?.id).toBe('');
    }

    // --- Requests sent after the signal. Until the server has handled it (its log line) a request
    // may still be served as usual; from then on it gets the drain answer (liveness excepted), or
    // is refused once the listener is closed. Never a reset.
    for (const o of lateRequests) {
      if (o.status === undefined) {
        expect(o.error, o.path).toMatch(/^ECONNREFUSED/);
        continue;
      }
      if (o.path === '/healthz') expect(o.status).toBe(200);
      else if ((o.writtenAt ?? 0) > shutdownAt) expectDrainAnswer(o, GRACE_MS);
      else expect([200, 503], o.path).toContain(o.status);
    }
    expect(late.filter((o) => o.status === 503).length).toBeGreaterThan(0);

    // --- The restart: every workflow completes; no completed node is called again, an aborted
    // call once more (the one duplicate docs/design.md#execution allows), everything else once.
    expect(views.map((v) => v.status)).toEqual(ids.map(() => 'completed'));
    for (const key of completedAtExit) expect(afterCounts.has(key), `${key} called again`).toBe(false);
    for (const [key, n] of afterCounts) expect(n, key).toBe(1);
    expect(afterCounts.size).toBe(WORKFLOWS * STEPS - completedAtExit.length);
    expect(errorRecords(second)).toEqual([]);
    expect(workflowsAfter).toBe(WORKFLOWS);
    for (const { id, first: was, again, end, all } of resumed) {
      expect(end, id).toMatchObject({ ended: true });
      const seen = [...was.parser.events, ...again.parser.events].map((e) => Number(e.id));
      expect(seen, id).toEqual(all.map((e) => e.seq));
      expect(all.at(-1)?.type, id).toBe('workflowEnd');
    }
  });
});

/**
 * A process manager that signals the start command (`npm start`) must stop the
 * server. `tsx src/main.ts` under npm left it listening after SIGTERM and SIGINT: npm passed the
 * signal to its shell, which died without passing it on to tsx and the node process under it.
 */
describe('npm start under a process manager', () => {
  const refusesConnections = async (url: string) => {
    try {
      await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1_000) });
      return false;
    } catch {
      return true;
    }
  };

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`${signal} to npm stops the server (graceful shutdown logged)`, { timeout: 60_000 }, async () => {
      const dbPath = suite.tmp.dbPath(`npm-start-${signal}.db`);
      const server = await startServer({ dbPath, viaNpmStart: true, shutdownGraceMs: 2_000 });
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      server.kill(signal);
      await server.exited;
      await waitFor(
        'the server to stop listening',
        async () => ((await refusesConnections(server.url)) ? true : undefined),
        10_000,
      );
      await waitFor(
        'the shutdown to be logged',
        () => server.logs.some((line) => line.includes('stopped cleanly')),
        5_000,
      );
    });
  }
});
