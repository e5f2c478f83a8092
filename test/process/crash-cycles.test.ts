import Database from 'better-sqlite3';
import { describe, expect, it, onTestFailed } from 'vitest';
import { seededRandom } from '../../src/metrics/selection.js';
import type { FakeReply, RecordedRequest } from '../support/fake-anthropic.js';
import { fakeAnthropicSuite } from '../support/fake-anthropic-suite.js';
import {
  accountCalls,
  callIdentity,
  conversationLength,
  firstUserMessage,
  getWorkflow,
  type KillState,
  type LoggedCall,
  TERMINAL,
} from '../support/process-calls.js';
import {
  answerFor,
  expectedOutput,
  expectedUserMessage,
  faultFor,
  faultReply,
  identityOf,
  planWorkflows,
  spawnedIdentity,
  type WorkflowPlan,
} from '../support/process-workload.js';
import { reportFigures, scale } from '../support/scale.js';
import { errorRecords, type ServerProcess, startServer, waitFor } from '../support/server-process.js';
import { auditStore, type NodeRow, type StoreAudit, type WorkflowRow } from '../support/store-audit.js';

/**
 * Crash cycles: the real server as a child process, SIGKILLed at seeded random moments
 * while provider calls are in flight, restarted on the same SQLite file, again and again, while
 * submissions keep arriving — one accepted right before each kill, one racing it. The fake
 * Anthropic API answers in 50–500 ms, 5% of the time with 429 + `retry-after: 1`, 2% with 529, to
 * workflows mixing prompt sequences, parallel branches, prompt-level reflection, an agent tool and
 * spawned children (test/support/process-workload.ts).
 *
 * After every kill, with the server dead: `PRAGMA integrity_check` is ok, every accepted workflow
 * has its row, and every completed node and terminal workflow has its events, spans and metrics
 * rows (test/support/store-audit.ts). After the last restart every accepted workflow is terminal
 * within 120 s with the outputs the script implies, and the fake's request log shows no call
 * repeated for a node completed before a kill and at most one more per kill for a node in flight
 * (test/support/process-calls.ts explains the keying).
 *
 * A kill is armed once a call is in flight: from then on the fake answers none of that life's
 * calls, so a call it holds unanswered when the SIGKILL is sent is one the kill cut off. At least
 * one kill must cut a call off, and the call accounting must count every call cut off as in flight
 * at its kill: a run whose kills all landed between calls fails instead of passing on nothing.
 *
 * Replay a run with CRASH_SEED=<the seed in the figures line>.
 */

const SEED = Number(process.env.CRASH_SEED ?? Math.floor(Math.random() * 2 ** 31));
const CYCLES = scale(3, 20);
const WORKFLOWS = scale(30, 200);
/** A kill lands this long after the server listens (then waits for a provider call in flight). */
const KILL_AFTER_MS = { min: 300, max: 3_000 };
const TERMINAL_WITHIN_MS = 120_000;
/** Booting `tsx src/main.ts` takes 3–10 s on a busy 2-core machine; more than the helper's 20 s is a hang. */
const BOOT_TIMEOUT_MS = 60_000;
const RUN = SEED.toString(36);

interface Submission {
  plan: WorkflowPlan;
  /** Set once a POST answered 202 (created) or 200 (an idempotent replay) with an id. */
  id?: string;
  replayed: boolean;
}

const plans = planWorkflows(WORKFLOWS, SEED, RUN);
const planByTag = new Map(plans.map((plan) => [plan.tag, plan]));
const submissions = plans.map((plan): Submission => ({ plan, replayed: false }));
/** Problems a check outside an `expect` found (odd POST answers, bodies the fake could not read). */
const oddities: string[] = [];

/** The server life sending requests now (1-based): the fake tags every request with it. */
let life = 0;
/** `answered`: the fake has sent its reply (an answer or a fault); until then the call is in flight. */
const calls: Array<LoggedCall & { user: string; answered: boolean }> = [];
const askedInLife = new Map<string, number>();
/** The last life whose kill is armed: the fake answers none of its calls any more. */
let killArmed = 0;

function reply(request: RecordedRequest) {
  let identity: string;
  let user: string;
  try {
    identity = callIdentity(request);
    user = firstUserMessage(request);
  } catch (err) {
    oddities.push(String(err));
    return { status: 400, body: { type: 'error', error: { type: 'invalid_request_error', message: String(err) } } };
  }
  const turns = conversationLength(request);
  const asked = `${identity}#${turns}|${life}`;
  const nth = (askedInLife.get(asked) ?? 0) + 1;
  askedInLife.set(asked, nth);
  const { outcome, delayMs } = faultFor(SEED, `${asked}|${nth}`);
  const call = { life, identity, turns, outcome, user, answered: false };
  calls.push(call);
  const answer: FakeReply = outcome === 'ok' ? { body: answerFor(identity, turns, life) } : faultReply(outcome, 0);
  return new Promise<FakeReply>((resolve) => {
    setTimeout(() => {
      // Held once the kill of its life is armed: the SIGKILL finds it in flight, and it is never sent.
      if (killArmed >= call.life) return;
      call.answered = true;
      resolve({ ...answer, delayMs: 0 });
    }, delayMs);
  });
}

/** A failed run leaves its database behind (the path is printed with the seed) to be looked at. */
let keepDatabase = false;
const suite = fakeAnthropicSuite('baton-crash-cycles-', { defaultReply: reply, keepFiles: () => keepDatabase });

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A client that retries: the Idempotency-Key (the tag) makes a resubmission find the first workflow. */
async function submit(server: ServerProcess, submission: Submission): Promise<void> {
  let status: number;
  let text: string;
  try {
    const res = await fetch(`${server.url}/v1/workflows`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': submission.plan.tag },
      body: JSON.stringify(submission.plan.definition),
    });
    status = res.status;
    text = await res.text();
  } catch {
    return; // the server died under the request: not accepted, sent again in the next life
  }
  if (status !== 202 && status !== 200) {
    oddities.push(`POST ${submission.plan.tag} answered ${status}: ${text}`);
    return;
  }
  const { id } = JSON.parse(text) as { id: string };
  if (submission.id !== undefined && submission.id !== id) {
    oddities.push(`${submission.plan.tag} accepted as ${submission.id}, then as ${id}`);
  }
  submission.id = id;
  if (status === 200) submission.replayed = true;
}

const spawning = plans.filter((plan) => plan.prompts.some((prompt) => prompt.role === 'spawn'));

/**
 * Workflows whose one spawn request made more than one child. A spawn node re-run after a kill
 * asks its model again, gets the same request back, and must find the child it already has.
 */
function duplicateSpawns(audit: StoreAudit): string[] {
  const children = [...audit.workflows.values()].filter((w) => w.parentId !== null);
  return spawning
    .filter((plan) => children.filter((child) => child.identity === spawnedIdentity(plan.tag)).length > 1)
    .map((plan) => plan.tag);
}

/** The audit of a copy of the store with one tool_calls row and one efficiency row deleted. */
function damagedCopy(dbPath: string, copyPath: string): string[] {
  const source = new Database(dbPath, { readonly: true, fileMustExist: true });
  source.prepare('VACUUM INTO ?').run(copyPath);
  source.close();
  const copy = new Database(copyPath);
  copy.exec(`DELETE FROM tool_calls WHERE id = (SELECT min(id) FROM tool_calls);
             DELETE FROM efficiency WHERE rowid = (SELECT min(rowid) FROM efficiency);`);
  copy.close();
  return auditStore(copyPath).problems;
}

/**
 * A completed workflow holds the answers the script implies, node by node; a failed one ran out of
 * transport retries (4 faults in a row) and nothing else; a cancelled one is a failed one's child.
 */
function expectOutcomes(final: StoreAudit): void {
  const nodesByWorkflow = new Map<string, NodeRow[]>();
  for (const node of final.nodes) {
    nodesByWorkflow.set(node.workflowId, [...(nodesByWorkflow.get(node.workflowId) ?? []), node]);
  }
  for (const w of final.workflows.values()) {
    if (w.status === 'failed') {
      expect(['LLM_RATE_LIMIT', 'LLM_OVERLOADED'], `${w.identity}: ${JSON.stringify(w.error)}`).toContain(
        w.error?.code,
      );
      continue;
    }
    if (w.status === 'cancelled' && final.workflows.get(w.parentId ?? '')?.status === 'failed') continue;
    expect(w.status, w.identity).toBe('completed');
    const plan = planByTag.get(w.identity);
    expect(w.output, w.identity).toEqual(plan ? plan.output : expectedOutput(w.identity));
    for (const node of nodesByWorkflow.get(w.id) ?? []) {
      expect(node.status, node.identity).toBe('completed');
      if (node.type === 'prompt') expect(node.output, node.identity).toEqual(expectedOutput(node.identity));
    }
  }
}

/** Every request carried what its node must send, in every life: replayed outputs fed the later steps. */
function expectRequestsAsPlanned(children: readonly WorkflowRow[]): void {
  const expectedUser = new Map<string, string>();
  for (const plan of plans) {
    for (const prompt of plan.prompts) {
      expectedUser.set(identityOf(plan.tag, prompt.name), expectedUserMessage(plan.tag, prompt));
    }
  }
  // A child's prompt is its task: the words the spawn that made it used.
  for (const child of children) expectedUser.set(child.identity, child.task ?? child.identity);
  for (const call of calls) {
    expect(call.user, `${call.identity}, life ${call.life}, turn #${call.turns}`).toBe(expectedUser.get(call.identity));
  }
}

/** This life's calls the fake has not answered yet. */
const callsInFlight = () => calls.filter((c) => c.life === life && !c.answered).length;
const accepted = () => submissions.filter((s): s is Submission & { id: string } => s.id !== undefined);

describe('crash cycles (SIGKILL at random moments, restart, repeat)', () => {
  it(`${CYCLES} cycles over ${WORKFLOWS} workflows: nothing accepted is lost, nothing completed is called again`, {
    timeout: scale(240_000, 40 * 60_000),
  }, async () => {
    const began = Date.now();
    const dbPath = suite.tmp.dbPath();
    console.log(`[crash-cycles] seed ${SEED} (replay: CRASH_SEED=${SEED}), database ${dbPath}`);
    onTestFailed(() => {
      keepDatabase = true;
    });
    const random = seededRandom(SEED ^ 0x9e3779b9);
    const between = (min: number, max: number) => min + Math.floor(random() * (max - min + 1));
    const env = suite.env({
      // 529s back off from 100 ms (429s wait their retry-after), so the run stays short.
      RETRY_BASE_DELAY_MS: '100',
      // The final wait polls every unfinished workflow: not a client the rate limit is for.
      RATE_LIMIT_PER_MINUTE: '0',
    });
    const servers: ServerProcess[] = [];
    const audits: StoreAudit[] = [];
    /** What the database held after kill k (nodes completed, turns committed), at index k - 1. */
    const kills: KillState[] = [];
    const attemptsAtKill = new Map<string, { kill: number; attempts: number; output: unknown }>();
    let acceptedRightBeforeKill = 0;
    /** Kills sent while the fake held at least one of the dying life's calls unanswered. */
    let killsWithCallInFlight = 0;
    /** Calls the fake held unanswered when a kill was sent, over all kills. */
    let callsCutOffByKills = 0;

    for (let cycle = 1; cycle <= CYCLES; cycle++) {
      life = cycle;
      const server = await startServer({ dbPath, env, startTimeoutMs: BOOT_TIMEOUT_MS });
      servers.push(server);
      const listening = Date.now();
      const killAfter = between(KILL_AFTER_MS.min, KILL_AFTER_MS.max);

      // This life's new workflows, after the ones a previous kill left unacknowledged.
      const from = Math.floor(((cycle - 1) * WORKFLOWS) / CYCLES);
      const fresh = submissions.slice(from, Math.floor((cycle * WORKFLOWS) / CYCLES));
      const [beforeKill, racingKill] = fresh.slice(-2);
      const spread = fresh.slice(0, -2);
      const again = submissions.slice(0, from).filter((s) => s.id === undefined);
      const inFlight: Array<Promise<void>> = again.map((s) => submit(server, s));
      for (const [i, s] of spread.entries()) {
        // A third at once, the rest spread over the time until the kill.
        const at = i < spread.length / 3 ? 0 : between(0, killAfter);
        inFlight.push(sleep(at).then(() => submit(server, s)));
      }

      await sleep(Math.max(0, listening + killAfter - Date.now()));
      await waitFor('a provider call in flight', () => callsInFlight() > 0, 3_000, 5).catch(() => false);
      // From here the fake answers nothing of this life: a call in flight now is in flight at the kill.
      killArmed = cycle;
      if (beforeKill) {
        await submit(server, beforeKill);
        expect(beforeKill.id, `${beforeKill.plan.tag}, submitted right before kill ${cycle}`).toBeDefined();
        acceptedRightBeforeKill++;
      }
      if (racingKill) {
        inFlight.push(submit(server, racingKill));
        await sleep(between(0, 3));
      }
      const cutOff = callsInFlight();
      callsCutOffByKills += cutOff;
      if (cutOff > 0) killsWithCallInFlight++;
      server.kill('SIGKILL');
      const exit = await server.exited;
      expect(exit.signal).toBe('SIGKILL');
      await Promise.allSettled(inFlight);
      // Requests the dead process had already sent finish landing in the fake's log.
      await sleep(100);

      const audit = auditStore(dbPath);
      audits.push(audit);
      expect(audit.integrity, `integrity_check after kill ${cycle}`).toBe('ok');
      for (const s of accepted())
        expect(audit.workflows.has(s.id), `${s.plan.tag} (${s.id}) after kill ${cycle}`).toBe(true);
      expect(audit.problems, `records of completed nodes after kill ${cycle}`).toEqual([]);
      expect(duplicateSpawns(audit), `workflows with two children of one spawn request after kill ${cycle}`).toEqual(
        [],
      );
      const completed = new Set<string>();
      for (const node of audit.nodes) {
        if (node.type !== 'prompt' || node.status !== 'completed') continue;
        completed.add(node.identity);
        if (!attemptsAtKill.has(node.identity)) {
          attemptsAtKill.set(node.identity, { kill: cycle, attempts: node.attempts, output: node.output });
        }
      }
      kills.push({ completed, committedTurns: audit.committedTurns });
    }

    // The last restart: everything accepted (and every unacknowledged submission, sent again) ends.
    life = CYCLES + 1;
    const lastRestart = Date.now();
    const last = await startServer({ dbPath, env, startTimeoutMs: BOOT_TIMEOUT_MS });
    servers.push(last);
    await Promise.all(submissions.filter((s) => s.id === undefined).map((s) => submit(last, s)));
    expect(oddities).toEqual([]);
    expect(submissions.filter((s) => s.id === undefined).map((s) => s.plan.tag)).toEqual([]);
    const unfinished = new Set(accepted().map((s) => s.id));
    await waitFor(
      'every accepted workflow terminal',
      async () => {
        for (const id of [...unfinished]) {
          if (TERMINAL.has((await getWorkflow(last, id)).status)) unfinished.delete(id);
        }
        return unfinished.size === 0;
      },
      Math.max(0, lastRestart + TERMINAL_WITHIN_MS - Date.now()),
      250,
    );
    last.kill('SIGTERM');
    expect((await last.exited).code).toBe(0);

    // The store after the last life.
    const final = auditStore(dbPath);
    audits.push(final);
    expect(final.integrity).toBe('ok');
    expect(final.problems).toEqual([]);
    expect(final.openSpans).toBe(0);
    expect(duplicateSpawns(final)).toEqual([]);
    // The audit itself can fail: a copy of the store missing one tool_calls row and one
    // efficiency row is caught.
    const damaged = damagedCopy(dbPath, suite.tmp.dbPath('damaged.db'));
    expect(damaged.some((p) => p.includes('tool_calls rows'))).toBe(true);
    expect(damaged.some((p) => p.includes('no efficiency row'))).toBe(true);
    const roots = [...final.workflows.values()].filter((w) => w.parentId === null);
    const children = [...final.workflows.values()].filter((w) => w.parentId !== null);
    // One workflow per submission, however many times it was sent: 0 accepted missing, none doubled.
    expect(roots.map((w) => w.identity).sort()).toEqual(plans.map((p) => p.tag).sort());
    for (const s of accepted()) expect(final.workflows.get(s.id)?.identity, s.id).toBe(s.plan.tag);
    for (const w of final.workflows.values()) expect(TERMINAL.has(w.status), `${w.identity} ${w.status}`).toBe(true);
    const maxTimeToTerminalMs = Math.max(0, ...roots.map((w) => (w.endedAt ?? Number.POSITIVE_INFINITY) - lastRestart));
    expect(maxTimeToTerminalMs).toBeLessThanOrEqual(TERMINAL_WITHIN_MS);

    expectOutcomes(final);
    // A node completed before a kill kept its attempt count and output through every later life.
    const finalByIdentity = new Map(final.nodes.map((n) => [n.identity, n]));
    for (const [identity, before] of attemptsAtKill) {
      const after = finalByIdentity.get(identity);
      expect(
        { attempts: after?.attempts, output: after?.output },
        `${identity}, completed at kill ${before.kill}`,
      ).toEqual({
        attempts: before.attempts,
        output: before.output,
      });
    }

    expectRequestsAsPlanned(children);

    // The request log: no durable call — of a completed node, or a committed
    // turn — is sent again, a call in flight at a kill at most once more: ≤ 1 repeated request per
    // call in flight at a kill. The kills did land with calls in flight, and the accounting
    // counts every call the fake never answered as in flight at its kill.
    const account = accountCalls(calls, kills);
    expect(account.repeated).toEqual([]);
    expect(account.inFlightRecalls).toBeLessThanOrEqual(account.callsInFlightAtKills);
    expect(killsWithCallInFlight, 'kills sent while the fake held a call unanswered').toBeGreaterThan(0);
    expect(account.callsInFlightAtKills).toBeGreaterThanOrEqual(callsCutOffByKills);
    for (const server of servers) expect(errorRecords(server)).toEqual([]);

    // A completed spawning workflow has its one child; no child comes from anywhere else.
    for (const plan of spawning) {
      const root = roots.find((w) => w.identity === plan.tag);
      const spawned = children.filter((child) => child.identity === spawnedIdentity(plan.tag));
      if (root?.status === 'completed') expect(spawned, plan.tag).toHaveLength(1);
    }
    const strays = children.filter((child) => !spawning.some((plan) => child.identity === spawnedIdentity(plan.tag)));
    expect(strays).toEqual([]);
    reportFigures('crash-cycles', {
      seed: SEED,
      cycles: CYCLES,
      kills: CYCLES,
      killsWithCallInFlight,
      callsCutOffByKills,
      workflowsAccepted: accepted().length,
      completed: roots.filter((w) => w.status === 'completed').length,
      failed: roots.filter((w) => w.status === 'failed').length,
      acceptedRightBeforeKill,
      submissionsReplayed: submissions.filter((s) => s.replayed).length,
      spawnedChildren: children.length,
      duplicateSpawns: duplicateSpawns(final).length,
      spawnsFoundAgainAfterKill: final.spawnsFoundAgain,
      maxTimeToTerminalAfterLastRestartMs: maxTimeToTerminalMs,
      providerRequests: calls.length,
      logicalCalls: account.logical,
      transportRetries: account.transportRetries,
      rateLimited: calls.filter((c) => c.outcome === 'rate_limited').length,
      overloaded: calls.filter((c) => c.outcome === 'overloaded').length,
      repeatedCalls: account.repeated.length,
      inFlightRecalls: account.inFlightRecalls,
      callsInFlightAtKills: account.callsInFlightAtKills,
      turnsCommitted: [...final.committedTurns.values()].reduce((sum, n) => sum + n, 0),
      integrityChecksOk: audits.filter((a) => a.integrity === 'ok').length,
      durationMs: Date.now() - began,
    });
  });
});

describe('the call accounting (test/support/process-calls.ts)', () => {
  it('tells a transport retry and a re-call of a call in flight from a repeat', () => {
    const call = (life: number, identity: string, turns: number, outcome = 'ok'): LoggedCall => ({
      life,
      identity,
      turns,
      outcome,
    });
    const account = accountCalls(
      [
        // a: a 429, then the transport retry of the same request.
        call(1, 't a', 1, 'rate_limited'),
        call(1, 't a', 1),
        // b: in flight at kill 1, called once more in life 2.
        call(1, 't b', 1),
        call(2, 't b', 1),
        // c: both turns in life 1, completed at kill 1, then called again.
        call(1, 't c', 1),
        call(1, 't c', 3),
        call(2, 't c', 1),
        // d: asked twice in one life after an ok answer.
        call(2, 't d', 1),
        call(2, 't d', 1),
        // e: a tool loop with turns 1 and 2 committed at kill 1, turn 3 in flight: life 2 resumes at 3.
        call(1, 't e', 1),
        call(1, 't e', 3),
        call(1, 't e', 5),
        call(2, 't e', 5),
        call(2, 't e', 7),
        // f: a loop replayed from turn 1 though turn 1 was committed (what the old engine did).
        call(1, 't f', 1),
        call(1, 't f', 3),
        call(2, 't f', 1),
        call(2, 't f', 3),
        // g: turn 2 asked while turn 1 was not yet durable.
        call(1, 't g', 1),
        call(1, 't g', 3),
      ],
      [
        {
          completed: new Set(['t a', 't c']),
          committedTurns: new Map([
            ['t e', 2],
            ['t f', 1],
          ]),
        },
      ],
    );
    expect(account).toEqual({
      logical: 19,
      transportRetries: 1,
      inFlightRecalls: 3,
      callsInFlightAtKills: 4,
      repeated: [
        't c #1: durable at kill 1, called in life 2',
        't d #1: called again in life 2',
        't f #1: durable at kill 1, called in life 2',
        't g #1: not durable at kill 1, yet #3 was asked',
      ],
    });
  });
});
