import { Agent } from 'node:http';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeServer, type RecordedRequest, startFakeAnthropic, textMessage } from '../helpers/fake-anthropic.js';
import {
  type EventStream,
  type Outcome,
  openEventStream,
  pausedRead,
  refused,
  send,
  slowUpload,
} from '../helpers/http-client.js';
import { errorRecords, startServer, stopAllServers, tempDir, waitFor } from '../helpers/server-process.js';
import { reportFigures } from './scale.js';

/**
 * Issue 11, graceful shutdown: SIGTERM with 50 HTTP requests in flight and 100 workflows running.
 * Requests received before the signal get whole answers (no reset), later ones a JSON 503 (or
 * ECONNREFUSED once the listener is closed), the process exits 0 within SHUTDOWN_GRACE_MS, and
 * at the next start on the same database every interrupted workflow resumes and completes without
 * calling a completed node again.
 *
 * The real server process and the real Anthropic SDK against a fake with latency. At the signal:
 * - the 100 workflows are running: step 2 on the wire (`CONCURRENCY` calls: half of them answer
 *   within the grace period, half would take far longer and are aborted), or step 1 done and step 2
 *   waiting for a call slot, or (a run that started late) step 1 itself waiting for a slot;
 * - the 50 requests in flight are what can really be unanswered at a given moment: 20 event
 *   streams of running workflows, 10 submissions whose body is still being uploaded, 10 large
 *   answers the client has not read yet (on loopback the kernel's socket buffers take them whole,
 *   so these check that the exit does not cut what was sent), and 10 keep-alive connections
 *   firing GETs back to back at a server busy enough that each has one unanswered at the signal.
 */

const WORKFLOWS = 100;
const CONCURRENCY = 64;
const GRACE_MS = 3_000;
/**
 * SHUTDOWN_GRACE_MS is the whole time from the signal to the exit (README; main.ts keeps up to 1.8 s
 * of it for closing the listener). The slack is what the test process adds: delivering the signal
 * and noticing the child's exit on a loaded machine.
 */
const EXIT_SLACK_MS = 250;
const STREAMS = 20;
const UPLOADS = 10;
const SLOW_READS = 10;
const GET_LOOPS = 10;
/** The quick half's step 2 answers this long after the signal (within the grace period); the other half's would take far longer. */
const QUICK_AFTER_SIGNAL_MS = 800;
const LONG_CALL_MS = 60_000;
const SHORT_CALL_MS = 30;
const STEPS = 3;

const MODEL = 'anthropic/claude-sonnet-5-5';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Workflow `w<i>`: the even ones are quick. */
const isQuick = (tag: string) => Number(tag.slice(1)) % 2 === 0;

function definition(tag: string) {
  return {
    name: 'shutdown-under-load',
    input: { tag },
    agents: { writer: { model: MODEL } },
    options: { cache: false },
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

/** "<tag> step-<n>", the first line of the call's user message. */
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

interface EventView {
  seq: number;
  type: string;
}

/** Prompt nodes by "<tag> <node>", read from the file of a stopped server. */
function promptNodes(dbPath: string, tagOf: ReadonlyMap<string, string>): Map<string, string> {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    const rows = db
      .prepare("SELECT workflow_id AS workflowId, name, status FROM nodes WHERE type = 'prompt'")
      .all() as Array<{ workflowId: string; name: string; status: string }>;
    return new Map(rows.map((r) => [`${tagOf.get(r.workflowId)} ${r.name}`, r.status]));
  } finally {
    db.close();
  }
}

/** Workflow statuses, read from the database file (the server may be running: WAL readers do not block it). */
function workflowStatuses(dbPath: string): string[] {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    return (db.prepare('SELECT status FROM workflows').all() as Array<{ status: string }>).map((r) => r.status);
  } finally {
    db.close();
  }
}

/** The drain answer the service gives every late request but liveness. */
function expectDrainAnswer(answer: Outcome): void {
  expect(answer.status, `${answer.path}: ${answer.body}`).toBe(503);
  expect(JSON.parse(answer.body ?? ''), answer.body).toEqual({
    statusCode: 503,
    code: 'SHUTTING_DOWN',
    error: 'Service Unavailable',
    message: expect.any(String),
  });
  expect(answer.headers?.['retry-after'], answer.path).toBe(String(GRACE_MS / 1000));
}

let fake: FakeServer;
/** Phase 1: step 2 takes its time; phase 2 (after the restart) every call is short. */
let phase: 1 | 2 = 1;
let signalled = () => {};
const signal = new Promise<void>((resolve) => {
  signalled = resolve;
});
const tmp = tempDir('baton-rel-shutdown-');

beforeAll(async () => {
  fake = await startFakeAnthropic({
    defaultReply: async (request) => {
      const key = callKey(request);
      const [tag = '', step] = key.split(' ');
      const body = textMessage(`answer(${key})`);
      if (phase === 2 || step !== 'step-2') return { body, delayMs: SHORT_CALL_MS };
      if (!isQuick(tag)) return { body, delayMs: LONG_CALL_MS };
      // Held until the signal, so that every quick step 2 is still on the wire when it comes.
      await signal;
      return { body, delayMs: QUICK_AFTER_SIGNAL_MS };
    },
  });
});
afterAll(async () => {
  await stopAllServers();
  await fake?.close();
  tmp.cleanup();
});

describe('graceful shutdown under load (SIGTERM)', () => {
  it('answers what it received, 503s the rest, exits 0 within the grace period, and resumes everything', {
    timeout: 90_000,
  }, async () => {
    const dbPath = tmp.dbPath('shutdown.db');
    const env = { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: fake.url, CONCURRENCY: String(CONCURRENCY) };
    const first = await startServer({ dbPath, env, shutdownGraceMs: GRACE_MS, startTimeoutMs: 60_000 });
    const base = new URL(first.url);

    const tags = Array.from({ length: WORKFLOWS }, (_, i) => `w${i}`);
    const ids = await Promise.all(
      tags.map(async (tag) => {
        const res = await fetch(`${first.url}/v1/workflows`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(definition(tag)),
        });
        expect(res.status).toBe(202);
        return ((await res.json()) as { id: string }).id;
      }),
    );
    const tagOf = new Map(ids.map((id, i) => [id, tags[i] as string]));

    // Every call slot busy with a step 2. Most step 1s are done by then; a workflow whose run
    // started late can still be before its step 1, waiting for a slot behind the step 2s (seen on
    // Node 24: 67 of 100 step 1s made). Waiting for all of them would wait forever, so the checks
    // below count the calls made rather than assume them.
    const isStep2 = (r: RecordedRequest) => callKey(r).endsWith('step-2');
    const step2Calls = () => fake.requests.filter(isStep2).length;
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
    let sigtermAt = 0;
    const loop = async (n: number) => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      try {
        for (let i = 0; ; i++) {
          const path = (n + i) % 3 === 0 ? '/healthz' : `/v1/workflows/${ids[(n * 7 + i) % ids.length]}`;
          const outcome = await send(agent, base, path);
          outcomes.push(outcome);
          if (refused(outcome) || (first.hasExited && outcome.error !== undefined)) return;
        }
      } finally {
        agent.destroy();
      }
    };
    const loops = Promise.all(Array.from({ length: GET_LOOPS }, (_, n) => loop(n)));
    await waitFor('the GET loops answering', () => outcomes.length >= 5 * GET_LOOPS, 10_000, 5);

    const runningAtSignal = workflowStatuses(dbPath).filter((s) => s === 'running').length;
    const callsAtSignal = fake.requests.length;
    sigtermAt = Date.now();
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
    const late: Outcome[] = [];
    const lateProbes = (async () => {
      while (!first.hasExited) {
        late.push(
          ...(await Promise.all([
            send(undefined, base, '/v1/workflows', {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify(definition('late-submit')),
            }),
            send(undefined, base, `/v1/workflows/${ids[0]}`),
            send(undefined, base, '/readyz'),
            send(undefined, base, '/healthz'),
          ])),
        );
        await sleep(50);
      }
    })();

    const exit = await exited;
    await Promise.all([loops, lateProbes]);
    const uploadAnswers = await Promise.all(uploads.map((u) => u.answer));
    const readAnswers = await Promise.all(reads.map((r) => r.answer));
    const streamEnds = await Promise.all(streams.map(({ stream }) => stream.done));
    const atExit = promptNodes(dbPath, tagOf);
    const statusesAtExit = workflowStatuses(dbPath);
    const before = fake.requests.slice(0, callsAtSignal);
    const shutdownAt = Number(first.records().find((r) => r.msg === 'shutting down: new requests get 503')?.time);

    // --- Restart on the same database.
    phase = 2;
    const cut = fake.requests.length;
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
    const views = await Promise.all(
      ids.map(async (id) => (await (await fetch(`${second.url}/v1/workflows/${id}`)).json()) as { status: string }),
    );
    // Each interrupted stream resumes from the last event it saw, through to workflowEnd.
    const resumed = await Promise.all(
      streams.map(async ({ id, stream }) => {
        const again = openEventStream(new URL(second.url), id, { lastEventId: stream.parser.events.at(-1)?.id ?? '0' });
        const end = await again.done;
        const json = (await (await fetch(`${second.url}/v1/workflows/${id}/events?limit=1000`)).json()) as {
          items: EventView[];
        };
        return { id, first: stream, again, end, all: json.items };
      }),
    );
    const afterCounts = countByKey(fake.requests.slice(cut));
    const workflowsAfter = workflowStatuses(dbPath).length;

    // --- Figures.
    const written = outcomes.filter((o) => o.writtenAt !== undefined && o.writtenAt < sigtermAt);
    const unansweredAtSignal = written.filter((o) => o.answeredAt === undefined || o.answeredAt > sigtermAt);
    const lateRequests = [...late, ...outcomes.filter((o) => !written.includes(o))];
    const completedAtExit = [...atExit].filter(([, s]) => s === 'completed').map(([k]) => k);
    reportFigures('graceful-shutdown', {
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
      callsAfterRestart: fake.requests.length - cut,
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
    const step1sBefore = before.filter((r) => !isStep2(r)).map(callKey);
    expect(
      step1sBefore.every((key) => key.endsWith('step-1')),
      step1sBefore.join(),
    ).toBe(true);
    expect(new Set(step1sBefore).size).toBe(step1sBefore.length);
    expect(step1sBefore.length).toBeGreaterThanOrEqual(CONCURRENCY);
    // No call started after the signal (a call waiting for a slot included).
    const startedLate = fake.requests.slice(callsAtSignal, cut).filter((r) => r.at > shutdownAt + 100);
    expect(startedLate.map(callKey)).toEqual([]);
    // The calls answered within the grace period were committed, the aborted ones left resumable.
    for (const request of before) {
      const key = callKey(request);
      const answeredInTime = !key.endsWith('step-2') || isQuick(key.split(' ')[0] ?? '');
      expect(atExit.get(key), key).toBe(answeredInTime ? 'completed' : 'running');
    }
    const calledBefore = new Set(before.map(callKey));
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
      expectDrainAnswer(answer);
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
      else if ((o.writtenAt ?? 0) > shutdownAt) expectDrainAnswer(o);
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
