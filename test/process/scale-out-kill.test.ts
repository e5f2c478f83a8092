import pg from 'pg';
import { afterAll, describe, expect, it, onTestFailed } from 'vitest';
import { seededRandom } from '../../src/metrics/selection.js';
import { databaseUnderTest } from '../support/database-under-test.js';
import type { RecordedRequest } from '../support/fake-anthropic.js';
import { fakeAnthropicSuite } from '../support/fake-anthropic-suite.js';
import { callIdentity, conversationLength, TERMINAL } from '../support/process-calls.js';
import { answerFor, faultFor, faultReply, planWorkflows, type WorkflowPlan } from '../support/process-workload.js';
import { reportFigures, scale } from '../support/scale.js';
import { errorRecords, type ServerProcess, startServer, waitFor } from '../support/server-process.js';
import { SseParser } from '../support/sse-parser.js';

/**
 * Three baton processes over one PostgreSQL (docs/operations.md#scale-out), the fake Anthropic API
 * answering in 50–500 ms (5% 429 with `retry-after: 1`, 2% 529), and seeded chaos: every 2–4 s a
 * random instance is SIGKILLed and started again; once an instance is SIGSTOPped for its lease + 2 s
 * and then continued; once the instance that took a workflow waiting at its critical checkpoint is
 * killed and the approval goes through another. Workflows (sequences, parallel branches, tools,
 * spawns) go in through random instances, 2/3 of them from one flooding tenant; each is watched
 * over SSE from an instance other than the one that accepted it, reconnecting with Last-Event-ID
 * to another when its instance dies.
 *
 * Then, from the database and the fake's log: every accepted workflow is terminal within 120 s;
 * no (workflow, node, attempt) started or ended twice and every workflow's seqs run 1..n; no span
 * is open; node rows agree with the journal's fold; no provider request for a node after it
 * completed, and the repeated ones no more than the requests in flight at the kills and the
 * pause; every stream saw every event once, in order; small tenants started within a bound while
 * the flood waited; the paused instance lost its leases; maxLlmCalls held.
 *
 * Replay with SCALE_SEED=<the seed in the figures line>. `npm run test:soak` runs it longer.
 */
const SEED = Number(process.env.SCALE_SEED ?? Math.floor(Math.random() * 2 ** 31));
const WORKFLOWS = scale(60, 300);
const KILLS = scale(4, 30);
const INSTANCES = 3;
const LEASE_MS = 3_000;
const TERMINAL_WITHIN_MS = 120_000;
const BOOT_TIMEOUT_MS = 60_000;
/** A small tenant's workflow starts within this of its submission, kills and all. */
const SMALL_START_BOUND_MS = 20_000;
const MAX_LLM_CALLS = 60;
const PER_TENANT = 4;
const RUN = SEED.toString(36);

const FLOOD = 'flood';
const SMALL = ['small1', 'small2', 'small3', 'small4'];
const keyOf = (tenant: string) => `${tenant}-key-${'k'.repeat(16)}`;

interface Call {
  identity: string;
  turns: number;
  outcome: string;
  at: number;
  dueAt: number;
}
const calls: Call[] = [];
const askedTimes = new Map<string, number>();

function reply(request: RecordedRequest) {
  const identity = callIdentity(request);
  const turns = conversationLength(request);
  const asked = `${identity}#${turns}`;
  const nth = (askedTimes.get(asked) ?? 0) + 1;
  askedTimes.set(asked, nth);
  const { outcome, delayMs } = faultFor(SEED, `${asked}|${nth}`);
  const at = Date.now();
  calls.push({ identity, turns, outcome, at, dueAt: at + delayMs });
  if (outcome !== 'ok') return faultReply(outcome, delayMs);
  return { body: answerFor(identity, turns, 0), delayMs };
}

const suite = fakeAnthropicSuite('baton-scale-out-', { defaultReply: reply });
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const inFlightNow = () => calls.filter((c) => c.at <= Date.now() && c.dueAt > Date.now()).length;

interface Submission {
  plan: WorkflowPlan;
  tenant: string;
  critical: boolean;
  id?: string;
  acceptedBy?: number;
  /** Seqs the SSE watcher received, across reconnections. */
  seen: number[];
  reconnects: number;
}

describe('scale-out: 3 instances over one PostgreSQL under kills and a pause', () => {
  let database: Awaited<ReturnType<typeof databaseUnderTest>> | undefined;
  let pool: pg.Pool | undefined;
  afterAll(async () => {
    await pool?.end();
    await database?.close();
  });

  it(`${WORKFLOWS} workflows, ${KILLS} kills and one pause: each step once, each event once`, {
    timeout: scale(300_000, 40 * 60_000),
  }, async () => {
    const began = Date.now();
    console.log(`[scale-out-kill] seed ${SEED} (replay: SCALE_SEED=${SEED})`);
    const random = seededRandom(SEED ^ 0x51ed);
    const between = (min: number, max: number) => min + Math.floor(random() * (max - min + 1));
    database = await databaseUnderTest('postgres', suite.tmp.dbPath());
    pool = new pg.Pool({ connectionString: database.env.DATABASE_URL, max: 2 });
    const env = suite.env({
      ...database.env,
      API_KEYS: [FLOOD, ...SMALL].map((t) => `${t}:${keyOf(t)}`).join(','),
      MAX_RUNNING_WORKFLOWS_PER_TENANT: String(PER_TENANT),
      LEASE_MS: String(LEASE_MS),
      LEASE_HEARTBEAT_MS: '700',
      RETRY_BASE_DELAY_MS: '100',
      RATE_LIMIT_PER_MINUTE: '0',
    });

    const servers: Array<ServerProcess | undefined> = Array.from({ length: INSTANCES }, () => undefined);
    const everyServer: ServerProcess[] = [];
    const boot = async (slot: number) => {
      const server = await startServer({ dbPath: suite.tmp.dbPath(`i${slot}`), env, startTimeoutMs: BOOT_TIMEOUT_MS });
      everyServer.push(server);
      servers[slot] = server;
      return server;
    };
    await Promise.all(servers.map((_, slot) => boot(slot)));
    onTestFailed(() => console.log(`[scale-out-kill] failed with seed ${SEED}`));
    const live = () => servers.flatMap((s, slot) => (s && !s.hasExited && !paused.has(slot) ? [slot] : []));
    const paused = new Set<number>();
    const pick = (not?: number) => {
      const slots = live().filter((s) => s !== not);
      const choices = slots.length > 0 ? slots : live();
      return choices[Math.floor(random() * choices.length)];
    };

    // 2/3 of the workflows from the flooding tenant, the rest spread over the small ones; one critical.
    const plans = planWorkflows(WORKFLOWS, SEED, RUN);
    const submissions: Submission[] = plans.map((plan, i) => ({
      plan,
      tenant: i % 3 === 2 ? (SMALL[Math.floor(i / 3) % SMALL.length] as string) : FLOOD,
      critical: i === 2,
      seen: [],
      reconnects: 0,
    }));
    for (const s of submissions) {
      const definition = s.plan.definition as Record<string, unknown>;
      definition.options = { ...(definition.options as object), limits: { maxLlmCalls: MAX_LLM_CALLS } };
      if (s.critical) definition.task = { type: 'migration', complexity: 'critical' };
    }
    const oddities: string[] = [];

    const submit = async (s: Submission): Promise<void> => {
      for (let attempt = 0; attempt < 40 && s.id === undefined; attempt++) {
        const slot = pick();
        const server = slot === undefined ? undefined : servers[slot];
        if (!server || slot === undefined) {
          await sleep(250);
          continue;
        }
        try {
          const res = await fetch(`${server.url}/v1/workflows`, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              authorization: `Bearer ${keyOf(s.tenant)}`,
              'idempotency-key': s.plan.tag,
            },
            body: JSON.stringify(s.plan.definition),
          });
          const text = await res.text();
          if (res.status === 202 || res.status === 200) {
            s.id = (JSON.parse(text) as { id: string }).id;
            s.acceptedBy = slot;
          } else if (res.status !== 503) {
            oddities.push(`POST ${s.plan.tag}: ${res.status} ${text}`);
            return;
          }
        } catch {
          // The instance died under the request: the same key through another finds the same workflow.
        }
        if (s.id === undefined) await sleep(200);
      }
    };

    /** Follows one workflow's events over SSE to its end, from an instance other than the one that took it. */
    const watch = async (s: Submission): Promise<void> => {
      const deadline = Date.now() + TERMINAL_WITHIN_MS + 60_000;
      let avoid = s.acceptedBy;
      while (Date.now() < deadline) {
        const slot = pick(avoid);
        const server = slot === undefined ? undefined : servers[slot];
        if (!server || slot === undefined) {
          await sleep(200);
          continue;
        }
        avoid = undefined;
        try {
          const last = s.seen.at(-1);
          const res = await fetch(`${server.url}/v1/workflows/${s.id}/events`, {
            headers: {
              accept: 'text/event-stream',
              authorization: `Bearer ${keyOf(s.tenant)}`,
              ...(last === undefined ? {} : { 'last-event-id': String(last) }),
            },
          });
          if (res.status !== 200 || !res.body) throw new Error(`SSE ${res.status}`);
          const parser = new SseParser();
          const decoder = new TextDecoder();
          for await (const chunk of res.body) {
            for (const frame of parser.push(decoder.decode(chunk as Uint8Array, { stream: true }))) {
              s.seen.push(Number(frame.id));
              if (frame.event === 'workflowEnd') return;
            }
          }
        } catch {
          // The instance died or paused: reconnect elsewhere with Last-Event-ID.
        }
        s.reconnects += 1;
        await sleep(200);
      }
    };

    // Submissions go in over the first seconds of the chaos; each gets its watcher once accepted.
    const watchers: Array<Promise<void>> = [];
    const submitting = (async () => {
      for (const s of submissions) {
        await sleep(between(0, 60));
        void submit(s).then(() => {
          if (s.id !== undefined) watchers.push(watch(s));
        });
      }
    })();

    // The chaos: kills every 2–4 s (each instance restarted), one pause, one checkpoint kill.
    const disruptions: Array<{ kind: string; slot: number; inFlight: number; held: number }> = [];
    const healthOf = async (server: ServerProcess) =>
      (await (await fetch(`${server.url}/healthz`)).json()) as { leases: { held: number; losses: number } };
    const kill = async (slot: number, kind: string) => {
      const server = servers[slot];
      if (!server || server.hasExited) return;
      const held = await healthOf(server).then(
        (h) => h.leases.held,
        () => -1,
      );
      disruptions.push({ kind, slot, inFlight: inFlightNow(), held });
      servers[slot] = undefined;
      server.kill('SIGKILL');
      await server.exited;
      boot(slot).catch((err) => oddities.push(`instance ${slot} did not start again: ${err}`));
    };
    let pausedSlot: number | undefined;
    let pausedLossesBefore = 0;
    let lossesAfterPause = 0;
    const critical = submissions.find((s) => s.critical) as Submission;
    let approvedThrough: number | undefined;
    // KILLS random kills, with the pause after the first and the checkpoint kill after the second.
    for (let k = 1; k <= KILLS + 2; k++) {
      await sleep(between(2_000, 4_000));
      if (k === 2) {
        // The pause: the instance holding most leases, stopped past its lease, then continued.
        const slots = live();
        const helds = await Promise.all(
          slots.map(async (slot) =>
            healthOf(servers[slot] as ServerProcess).then(
              (h) => h.leases,
              () => undefined,
            ),
          ),
        );
        const index = helds.reduce((best, h, i) => ((h?.held ?? -1) > (helds[best]?.held ?? -1) ? i : best), 0);
        pausedSlot = slots[index] as number;
        pausedLossesBefore = helds[index]?.losses ?? 0;
        const server = servers[pausedSlot] as ServerProcess;
        disruptions.push({ kind: 'pause', slot: pausedSlot, inFlight: inFlightNow(), held: helds[index]?.held ?? -1 });
        paused.add(pausedSlot);
        server.proc.kill('SIGSTOP');
        await sleep(LEASE_MS + 2_000);
        server.proc.kill('SIGCONT');
        // Its leases were taken meanwhile: it finds them lost (heartbeat or fence) once it runs again.
        if ((helds[index]?.held ?? 0) > 0) {
          lossesAfterPause = await waitFor(
            'the paused instance to find its leases lost',
            async () => {
              const losses = (await healthOf(server)).leases.losses - pausedLossesBefore;
              return losses > 0 ? losses : undefined;
            },
            10_000,
            100,
          );
        }
        paused.delete(pausedSlot);
        continue;
      }
      if (k === 4 && critical.id !== undefined) {
        // The checkpoint: kill the instance that took it, approve it through another.
        await waitFor('the checkpoint event', async () => critical.seen.length > 0, 30_000, 100);
        if (critical.acceptedBy !== undefined && critical.acceptedBy !== pausedSlot) {
          await kill(critical.acceptedBy, 'checkpoint-holder');
        }
        approvedThrough = pick(critical.acceptedBy);
        const through = servers[approvedThrough as number] as ServerProcess;
        const approved = await fetch(`${through.url}/v1/workflows/${critical.id}/approve`, {
          method: 'POST',
          headers: { authorization: `Bearer ${keyOf(critical.tenant)}` },
        });
        expect(approved.status).toBe(202);
        continue;
      }
      const victim = pick();
      if (victim !== undefined) await kill(victim, 'kill');
    }
    await submitting;
    const chaosEnded = Date.now();
    await waitFor('every instance up again', async () => live().length === INSTANCES, BOOT_TIMEOUT_MS, 200);
    expect(oddities).toEqual([]);
    expect(submissions.filter((s) => s.id === undefined).map((s) => s.plan.tag)).toEqual([]);

    const db = pool;
    const statuses = async () =>
      (
        await db.query<{ id: string; status: string }>(
          'SELECT id, status FROM workflows WHERE parent_workflow_id IS NULL',
        )
      ).rows;
    await waitFor(
      'every accepted workflow terminal',
      async () => (await statuses()).every((w) => TERMINAL.has(w.status)),
      TERMINAL_WITHIN_MS,
      500,
    );
    const allTerminalMs = Date.now() - chaosEnded;
    await Promise.all(watchers);

    const pauseHeld = disruptions.find((d) => d.kind === 'pause')?.held ?? 0;
    // The pause stopped an instance while it held runs (else it would have shown nothing).
    expect(pauseHeld).toBeGreaterThan(0);
    for (const slot of live()) (servers[slot] as ServerProcess).kill('SIGTERM');
    await Promise.all(everyServer.map((s) => s.exited));
    for (const server of everyServer) expect(errorRecords(server)).toEqual([]);

    // --- the database ------------------------------------------------------------------------------
    const q = async <T extends pg.QueryResultRow>(sql: string) => (await db.query<T>(sql)).rows;
    const twice = await q<{ workflow_id: string; node_id: string; attempt: string; type: string; n: number }>(
      `SELECT workflow_id, node_id, payload ->> 'attempt' AS attempt, type, count(*)::int AS n FROM events
        WHERE type IN ('stepStart', 'stepEnd') GROUP BY 1, 2, 3, 4 HAVING count(*) > 1`,
    );
    expect(twice).toEqual([]);
    const gaps = await q<{ workflow_id: string }>(
      `SELECT workflow_id FROM events GROUP BY workflow_id
        HAVING count(*) <> max(seq) OR count(DISTINCT seq) <> count(*) OR min(seq) <> 1`,
    );
    expect(gaps).toEqual([]);
    expect(await database.count('SELECT count(*) FROM spans WHERE ended_at IS NULL')).toBe(0);
    // Node rows agree with the journal's fold: the last start's attempt, the last end's status.
    const disagree = await q<{ id: string }>(
      `WITH last_start AS (
         SELECT DISTINCT ON (node_id) node_id, (payload ->> 'attempt')::int AS attempt FROM events
          WHERE type = 'stepStart' ORDER BY node_id, seq DESC
       ), last_end AS (
         SELECT DISTINCT ON (node_id) node_id, payload ->> 'status' AS status FROM events
          WHERE type = 'stepEnd' ORDER BY node_id, seq DESC
       )
       SELECT n.id FROM nodes n LEFT JOIN last_start s ON s.node_id = n.id LEFT JOIN last_end e ON e.node_id = n.id
        WHERE n.attempts <> coalesce(s.attempt, 0)
           OR (n.status IN ('completed', 'failed', 'cancelled') AND n.status <> coalesce(e.status, ''))`,
    );
    expect(disagree).toEqual([]);
    const roots = await q<{
      id: string;
      tenant_id: string;
      status: string;
      error: string | null;
      created_at: number;
      started_at: number | null;
      llm_requests_taken: number;
      tag: string;
    }>(
      `SELECT id, tenant_id, status, error, created_at, started_at, llm_requests_taken,
              definition::json -> 'input' ->> 'tag' AS tag
         FROM workflows WHERE parent_workflow_id IS NULL`,
    );
    expect(roots.map((r) => r.tag).sort()).toEqual(plans.map((p) => p.tag).sort());
    for (const root of roots) {
      if (root.status === 'completed') continue;
      // Only a provider that failed four times running fails a workflow here.
      expect(root.status, root.tag).toBe('failed');
      expect(['LLM_RATE_LIMIT', 'LLM_OVERLOADED'], `${root.tag}: ${root.error}`).toContain(
        (JSON.parse(root.error ?? '{}') as { code?: string }).code,
      );
    }
    for (const root of roots) expect(root.llm_requests_taken, root.tag).toBeLessThanOrEqual(MAX_LLM_CALLS);
    const requestsByTag = new Map<string, number>();
    for (const call of calls) {
      const tag = call.identity.split(' ')[0] ?? '';
      requestsByTag.set(tag, (requestsByTag.get(tag) ?? 0) + 1);
    }
    for (const [tag, n] of requestsByTag) expect(n, tag).toBeLessThanOrEqual(MAX_LLM_CALLS);

    // --- the provider's log ----------------------------------------------------------------------
    // No request for a prompt node after it completed (a kill or a takeover replays its output).
    const completedAt = await q<{ identity: string; ended_at: number }>(
      `SELECT (w.definition::json -> 'input' ->> 'tag') || ' ' || n.name AS identity, n.ended_at
         FROM nodes n JOIN workflows w ON w.id = n.workflow_id
        WHERE n.type = 'prompt' AND n.status = 'completed' AND w.parent_workflow_id IS NULL`,
    );
    const endOf = new Map(completedAt.map((r) => [r.identity, Number(r.ended_at)]));
    const afterCompletion = calls.filter((c) => c.at > (endOf.get(c.identity) ?? Number.POSITIVE_INFINITY) + 5);
    expect(afterCompletion.map((c) => `${c.identity} #${c.turns}`)).toEqual([]);
    // Requests answered ok more than once for one turn: at most the requests in flight at the disruptions.
    const okTimes = new Map<string, number>();
    for (const c of calls)
      if (c.outcome === 'ok')
        okTimes.set(`${c.identity}#${c.turns}`, (okTimes.get(`${c.identity}#${c.turns}`) ?? 0) + 1);
    const repeated = [...okTimes.values()].reduce((sum, n) => sum + n - 1, 0);
    const inFlightAtDisruptions = disruptions.reduce((sum, d) => sum + d.inFlight, 0);
    expect(repeated).toBeLessThanOrEqual(inFlightAtDisruptions);

    // --- the streams -----------------------------------------------------------------------------
    const eventCounts = new Map(
      (
        await q<{ workflow_id: string; n: number }>('SELECT workflow_id, count(*)::int AS n FROM events GROUP BY 1')
      ).map((r) => [r.workflow_id, r.n]),
    );
    for (const s of submissions) {
      const n = eventCounts.get(s.id as string) ?? 0;
      expect(s.seen, `${s.plan.tag}: the events its stream saw`).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    }

    // --- fairness --------------------------------------------------------------------------------
    const waitOf = (r: (typeof roots)[number]) =>
      Number(r.started_at ?? Number.POSITIVE_INFINITY) - Number(r.created_at);
    const criticalId = critical.id;
    const small = roots.filter((r) => r.tenant_id !== FLOOD && r.id !== criticalId);
    const flood = roots.filter((r) => r.tenant_id === FLOOD);
    const smallMaxWait = Math.max(...small.map(waitOf));
    const floodMaxWait = Math.max(...flood.map(waitOf));
    expect(smallMaxWait).toBeLessThanOrEqual(SMALL_START_BOUND_MS);
    expect(floodMaxWait).toBeGreaterThan(smallMaxWait);

    reportFigures('scale-out-kill', {
      seed: SEED,
      instances: INSTANCES,
      workflows: WORKFLOWS,
      kills: disruptions.filter((d) => d.kind !== 'pause').length,
      pausedHeldLeases: pauseHeld,
      pausedLosses: lossesAfterPause,
      approvedThrough,
      completed: roots.filter((r) => r.status === 'completed').length,
      failed: roots.filter((r) => r.status === 'failed').length,
      providerRequests: calls.length,
      repeatedOkRequests: repeated,
      inFlightAtDisruptions,
      streamReconnects: submissions.reduce((sum, s) => sum + s.reconnects, 0),
      smallMaxWaitMs: smallMaxWait,
      floodMaxWaitMs: floodMaxWait,
      allTerminalAfterChaosMs: allTerminalMs,
      durationMs: Date.now() - began,
    });
  });
});
