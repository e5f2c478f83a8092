/**
 * baton over PostgreSQL against baton over SQLite, and 2 instances over one PostgreSQL against 1
 * (docs/operations.md#scale-out), all measured in the same run on a throwaway cluster
 * (test/support/postgres-cluster.ts: initdb on a free loopback port, fsync off).
 *
 * Part A — CPU per step, one instance each: bench/http-steps.ts's 10-step job (bench/lib/http-job.ts:
 * POST, SSE until workflowEnd, GET) with 16 jobs in flight, against one baton over SQLite (a temp
 * DATABASE_PATH, as http-steps runs it) and one baton over PostgreSQL (DATABASE_URL of a fresh
 * database). Server CPU = utime+stime of the baton process tree (/proc) and, for PostgreSQL, of the
 * PostgreSQL server too: the postmaster (first line of <dataDir>/postmaster.pid) and its
 * backends and helpers, live or reaped. Each phase ends after a quiet 500 ms. Rounds alternate the
 * order of the two; the ratio postgres/sqlite is taken per round, then the median. Bar:
 * ≤ 2.5× (goal_cpu_ratio_postgres_over_sqlite_max).
 *
 * Part B — scale-out on a latency-bound job: BENCH_SCALE_WORKFLOWS workflows (400), each a sequence
 * of BENCH_SCALE_STEPS prompts (3) on sim/haiku with 200 ms of simulated latency per call, cache
 * off, submitted all up front (round-robin over the instances) to 1, then 2 baton instances over a
 * fresh PostgreSQL database each time, default CONCURRENCY (16 model calls at once per instance),
 * rate limit off. Wall time = the last workflow's endedAt − the first POST; completion is found by
 * polling GET /v1/workflows?name=…&status=…&limit=1 (idle, running, failed, cancelled) every 200 ms,
 * then one full listing checks that every workflow submitted completed. The speedup (1-instance
 * wall / 2-instance wall) is taken per round, then the median. Bar: ≥ 1.8× (goal_speedup_2_over_1_min).
 * Before each timed run every instance gets 20 jobs of the 10-step job (another name) as a warm-up.
 *
 * Env: BENCH_WARMUP (Part A jobs per server before the rounds, 200), BENCH_ROUNDS (Part A rounds, 5),
 * BENCH_CONCURRENT_JOBS (Part A jobs per round, 300), BENCH_SCALE_WORKFLOWS (400),
 * BENCH_SCALE_STEPS (3), BENCH_SCALE_ROUNDS (Part B rounds; default BENCH_ROUNDS when set, else 3).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type PostgresCluster, startPostgresCluster } from '../test/support/postgres-cluster.js';
import { withClient } from '../test/support/postgres-database.js';
import { median, r1, r2 } from './lib/figures.js';
import {
  get,
  IN_FLIGHT,
  postJson,
  RESPONSE_FORMAT,
  runJobs,
  type Server,
  STEPS,
  SYSTEM,
  sleep,
  startServer,
  TEXT,
  treeCpuUs,
} from './lib/http-job.js';

const WARMUP = Number(process.env.BENCH_WARMUP ?? 200);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CONCURRENT_JOBS = Number(process.env.BENCH_CONCURRENT_JOBS ?? 300);
const SCALE_WORKFLOWS = Number(process.env.BENCH_SCALE_WORKFLOWS ?? 400);
const SCALE_STEPS = Number(process.env.BENCH_SCALE_STEPS ?? 3);
const SCALE_ROUNDS = Number(process.env.BENCH_SCALE_ROUNDS ?? process.env.BENCH_ROUNDS ?? 3);
/** Which parts run: `cpu`, `scale-out` or both (the default), comma-separated. */
const PARTS = new Set((process.env.BENCH_SCALE_PARTS ?? 'cpu,scale-out').split(','));
const LATENCY_MS = 200;
/** baton's default CONCURRENCY (model calls at once per instance): not overridden here. */
const MODEL_CONCURRENCY = 16;
const QUIET_MS = 500;
const POLL_MS = 200;

const log = (message: string): void => {
  process.stderr.write(`scale: ${message}\n`);
};

// ── PostgreSQL ──

/** A new, empty database on the cluster; baton migrates it at boot. */
async function createDatabase(cluster: PostgresCluster, prefix: string): Promise<{ url: string; name: string }> {
  const name = `${prefix}_${randomBytes(5).toString('hex')}`;
  await withClient(cluster.url, (client) => client.query(`CREATE DATABASE ${name}`));
  const url = new URL(cluster.url);
  url.pathname = `/${name}`;
  return { url: url.toString(), name };
}

async function dropDatabase(cluster: PostgresCluster, name: string): Promise<void> {
  await withClient(cluster.url, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
}

/** The postmaster's pid: the first line of postmaster.pid. treeCpuUs on it counts every backend, live or reaped. */
function postmasterPid(cluster: PostgresCluster): number {
  const pid = Number(readFileSync(join(cluster.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0) throw new Error(`no postmaster pid in ${cluster.dataDir}/postmaster.pid`);
  return pid;
}

// ── servers ──

const started = new Set<Server>();
const tempDirs: string[] = [];

async function startBaton(label: string, env: Record<string, string> = {}): Promise<Server> {
  const dir = mkdtempSync(join(tmpdir(), `baton-bench-scale-${label}-`));
  tempDirs.push(dir);
  const server = await startServer('baton', { dir, env });
  started.add(server);
  return server;
}

async function stopAll(servers: Iterable<Server>): Promise<void> {
  const list = [...servers];
  await Promise.all(list.map((server) => server.stop()));
  for (const server of list) started.delete(server);
}

async function health(server: Server): Promise<{ database?: string; leases?: { claims: number; losses: number } }> {
  const { status, body } = await get(`${server.url}/healthz`);
  if (status !== 200) throw new Error(`GET /healthz answered ${status}`);
  return JSON.parse(body) as { database?: string; leases?: { claims: number; losses: number } };
}

// ── Part A: CPU per step ──

interface CpuPhase {
  batonUs: number;
  postgresUs: number;
  stepsPerS: number;
}

async function cpuPhase(server: Server, postgresPid: number | undefined): Promise<CpuPhase> {
  const batonBefore = treeCpuUs(server.pid);
  const pgBefore = postgresPid === undefined ? 0 : treeCpuUs(postgresPid);
  const start = performance.now();
  await runJobs(server, CONCURRENT_JOBS, IN_FLIGHT);
  const wallMs = performance.now() - start;
  await sleep(QUIET_MS);
  const steps = CONCURRENT_JOBS * STEPS;
  return {
    batonUs: (treeCpuUs(server.pid) - batonBefore) / steps,
    postgresUs: postgresPid === undefined ? 0 : (treeCpuUs(postgresPid) - pgBefore) / steps,
    stepsPerS: (steps * 1000) / wallMs,
  };
}

async function partA(cluster: PostgresCluster) {
  const db = await createDatabase(cluster, 'bench_cpu');
  const pgPid = postmasterPid(cluster);
  const sqlite = await startBaton('sqlite');
  const postgres = await startBaton('postgres', { DATABASE_URL: db.url });
  try {
    const kinds = [(await health(sqlite)).database, (await health(postgres)).database];
    if (kinds[0] !== 'sqlite' || kinds[1] !== 'postgres') throw new Error(`databases: ${kinds.join(', ')}`);
    for (const server of [sqlite, postgres]) {
      await runJobs(server, Math.ceil(WARMUP / 3), 1);
      await runJobs(server, WARMUP - Math.ceil(WARMUP / 3), IN_FLIGHT);
    }
    const sqliteRounds: CpuPhase[] = [];
    const pgRounds: CpuPhase[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const order = i % 2 === 0 ? (['sqlite', 'postgres'] as const) : (['postgres', 'sqlite'] as const);
      for (const kind of order) {
        if (kind === 'sqlite') sqliteRounds.push(await cpuPhase(sqlite, undefined));
        else pgRounds.push(await cpuPhase(postgres, pgPid));
      }
      const s = sqliteRounds[i] as CpuPhase;
      const p = pgRounds[i] as CpuPhase;
      log(
        `A round ${i + 1}/${ROUNDS}: sqlite ${Math.round(s.batonUs)} µs/step, postgres ${Math.round(p.batonUs)} + ` +
          `${Math.round(p.postgresUs)} µs/step (${r2((p.batonUs + p.postgresUs) / s.batonUs)}×)`,
      );
    }
    const total = (p: CpuPhase) => p.batonUs + p.postgresUs;
    const ratios = pgRounds.map((p, i) => total(p) / total(sqliteRounds[i] as CpuPhase));
    const batonRatios = pgRounds.map((p, i) => p.batonUs / (sqliteRounds[i] as CpuPhase).batonUs);
    const ratio = median(ratios);
    return {
      job: { steps: STEPS, in_flight: IN_FLIGHT, jobs_per_round: CONCURRENT_JOBS, warmup_jobs: WARMUP },
      sqlite: {
        cpu_us_per_step: r1(median(sqliteRounds.map(total))),
        steps_per_s: Math.round(median(sqliteRounds.map((p) => p.stepsPerS))),
        cpu_us_per_step_rounds: sqliteRounds.map((p) => Math.round(total(p))),
      },
      postgres: {
        cpu_us_per_step: r1(median(pgRounds.map(total))),
        baton_cpu_us_per_step: r1(median(pgRounds.map((p) => p.batonUs))),
        postgres_cpu_us_per_step: r1(median(pgRounds.map((p) => p.postgresUs))),
        steps_per_s: Math.round(median(pgRounds.map((p) => p.stepsPerS))),
        cpu_us_per_step_rounds: pgRounds.map((p) => Math.round(total(p))),
      },
      ratio_postgres_over_sqlite: r2(ratio),
      ratio_postgres_over_sqlite_rounds: ratios.map(r2),
      ratio_baton_only_postgres_over_sqlite: r2(median(batonRatios)),
      meets_goal: ratio <= 2.5,
      rounds: ROUNDS,
    };
  } finally {
    await stopAll([sqlite, postgres]);
    await dropDatabase(cluster, db.name).catch((err: unknown) => log(`drop ${db.name}: ${String(err)}`));
  }
}

// ── Part B: 2 instances vs 1 on a latency-bound job ──

const SCALE_NAME = 'bench-scale';
const SCALE_DEFINITION = {
  name: SCALE_NAME,
  input: { text: TEXT },
  agents: { writer: { model: 'sim/haiku', system: SYSTEM, simulate: { latencyMs: LATENCY_MS } } },
  options: { cache: false },
  root: {
    type: 'sequence',
    name: 'main',
    steps: Array.from({ length: SCALE_STEPS }, (_, i) => ({
      type: 'prompt',
      name: `step-${i + 1}`,
      agent: 'writer',
      user: `Step ${i + 1} of ${SCALE_STEPS}: summarise the text below for an operator.\n\n{{input.text}}`,
      responseFormat: RESPONSE_FORMAT,
    })),
  },
};
const SCALE_BODY = JSON.stringify(SCALE_DEFINITION);

interface Summary {
  id: string;
  status: string;
  endedAt: string | null;
  error: unknown;
}

/** Every workflow named SCALE_NAME, through `server`'s list endpoint (pages of 100). */
async function listAll(server: Server): Promise<Summary[]> {
  const items: Summary[] = [];
  let cursor: string | null = null;
  do {
    const query = `name=${SCALE_NAME}&limit=100${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
    const { status, body } = await get(`${server.url}/v1/workflows?${query}`);
    if (status !== 200) throw new Error(`GET /v1/workflows answered ${status}: ${body.slice(0, 500)}`);
    const page = JSON.parse(body) as { items: Summary[]; nextCursor: string | null };
    items.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor !== null);
  return items;
}

async function firstWithStatus(server: Server, status: string): Promise<Summary | undefined> {
  const { status: code, body } = await get(`${server.url}/v1/workflows?name=${SCALE_NAME}&status=${status}&limit=1`);
  if (code !== 200) throw new Error(`GET /v1/workflows answered ${code}: ${body.slice(0, 500)}`);
  return (JSON.parse(body) as { items: Summary[] }).items[0];
}

interface ScaleRun {
  /** First POST sent → the last workflow's endedAt. */
  wallMs: number;
  submitMs: number;
  /** First POST sent → the poll that found none left running (≤ POLL_MS + a poll later than wallMs). */
  detectedMs: number;
  /** CPU per step over the run and the quiet time after it: all baton instances, the PostgreSQL server, this client. */
  batonUs: number;
  postgresUs: number;
  clientUs: number;
  claims: number[];
  losses: number;
}

async function scaleRun(cluster: PostgresCluster, instances: number): Promise<ScaleRun> {
  const db = await createDatabase(cluster, `bench_scale${instances}`);
  const pgPid = postmasterPid(cluster);
  const servers: Server[] = [];
  try {
    // One after the other: the first applies the migrations, the others find them applied.
    for (let i = 0; i < instances; i++) servers.push(await startBaton(`pg${instances}-${i}`, { DATABASE_URL: db.url }));
    // Warm each instance's code paths with a few zero-latency jobs (another name: not counted below).
    for (const server of servers) await runJobs(server, 20, 4);
    const before = await Promise.all(servers.map(health));
    const batonCpu = () => servers.reduce((sum, s) => sum + treeCpuUs(s.pid), 0);
    const batonBefore = batonCpu();
    const pgBefore = treeCpuUs(pgPid);

    const clientBefore = process.cpuUsage();
    const startMs = Date.now();
    const ids: string[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (next < SCALE_WORKFLOWS) {
          const i = next++;
          const server = servers[i % servers.length] as Server;
          const answer = await postJson(`${server.url}/v1/workflows`, SCALE_BODY);
          if (answer.status !== 202) throw new Error(`POST answered ${answer.status}: ${answer.body.slice(0, 500)}`);
          ids.push((JSON.parse(answer.body) as { id: string }).id);
        }
      }),
    );
    const submitMs = Date.now() - startMs;

    const ideal = (SCALE_WORKFLOWS * SCALE_STEPS * LATENCY_MS) / (MODEL_CONCURRENCY * instances);
    const deadline = Date.now() + 5 * ideal + 60_000;
    // Polls stay small (one row per status asked), so that the client's own load stays out of the figure.
    let polls = 0;
    for (;;) {
      if (Date.now() > deadline) throw new Error(`${instances} instance(s): not done after ${Date.now() - startMs} ms`);
      await sleep(POLL_MS);
      const server = servers[polls++ % servers.length] as Server;
      const [idle, running, failed, cancelled] = await Promise.all(
        (['idle', 'running', 'failed', 'cancelled'] as const).map((status) => firstWithStatus(server, status)),
      );
      const bad = failed ?? cancelled;
      if (bad) throw new Error(`workflow ${bad.id} ended ${bad.status}: ${JSON.stringify(bad.error)}`);
      if (idle === undefined && running === undefined) break;
    }
    const pollEndMs = Date.now();
    const clientCpu = process.cpuUsage(clientBefore);
    await sleep(QUIET_MS);
    const steps = SCALE_WORKFLOWS * SCALE_STEPS;
    const batonUs = (batonCpu() - batonBefore) / steps;
    const postgresUs = (treeCpuUs(pgPid) - pgBefore) / steps;
    const done = await listAll(servers[0] as Server);
    if (done.length !== SCALE_WORKFLOWS || !done.every((w) => w.status === 'completed')) {
      throw new Error(`${instances} instance(s): ${done.length} workflows listed, not all completed`);
    }
    const listed = new Set(done.map((w) => w.id));
    if (ids.length !== SCALE_WORKFLOWS || !ids.every((id) => listed.has(id))) {
      throw new Error(`${instances} instance(s): the list does not hold the ${SCALE_WORKFLOWS} workflows submitted`);
    }
    const lastEnd = Math.max(...done.map((w) => Date.parse(w.endedAt ?? '')));
    if (!Number.isFinite(lastEnd)) throw new Error('a completed workflow has no endedAt');
    const after = await Promise.all(servers.map(health));
    return {
      wallMs: lastEnd - startMs,
      submitMs,
      detectedMs: pollEndMs - startMs,
      batonUs,
      postgresUs,
      clientUs: (clientCpu.user + clientCpu.system) / steps,
      claims: after.map((h, i) => (h.leases?.claims ?? 0) - (before[i]?.leases?.claims ?? 0)),
      losses: after.reduce((sum, h, i) => sum + (h.leases?.losses ?? 0) - (before[i]?.leases?.losses ?? 0), 0),
    };
  } finally {
    await stopAll(servers);
    await dropDatabase(cluster, db.name).catch((err: unknown) => log(`drop ${db.name}: ${String(err)}`));
  }
}

async function partB(cluster: PostgresCluster) {
  const one: ScaleRun[] = [];
  const two: ScaleRun[] = [];
  for (let i = 0; i < SCALE_ROUNDS; i++) {
    const order = i % 2 === 0 ? [1, 2] : [2, 1];
    for (const n of order) {
      const run = await scaleRun(cluster, n);
      (n === 1 ? one : two).push(run);
      log(
        `B round ${i + 1}/${SCALE_ROUNDS}: ${n} instance(s) ${Math.round(run.wallMs)} ms ` +
          `(submit ${run.submitMs} ms, claims ${run.claims.join('/')})`,
      );
    }
  }
  const speedups = one.map((o, i) => o.wallMs / (two[i] as ScaleRun).wallMs);
  const speedup = median(speedups);
  const figures = (runs: ScaleRun[], instances: number) => ({
    wall_ms: Math.round(median(runs.map((r) => r.wallMs))),
    wall_ms_rounds: runs.map((r) => Math.round(r.wallMs)),
    ideal_wall_ms: Math.round((SCALE_WORKFLOWS * SCALE_STEPS * LATENCY_MS) / (MODEL_CONCURRENCY * instances)),
    submit_ms: Math.round(median(runs.map((r) => r.submitMs))),
    detected_ms: Math.round(median(runs.map((r) => r.detectedMs))),
    baton_cpu_us_per_step: r1(median(runs.map((r) => r.batonUs))),
    postgres_cpu_us_per_step: r1(median(runs.map((r) => r.postgresUs))),
    client_cpu_us_per_step: r1(median(runs.map((r) => r.clientUs))),
    claims_per_instance_rounds: runs.map((r) => r.claims),
    lease_losses: runs.reduce((sum, r) => sum + r.losses, 0),
  });
  return {
    job: {
      workflows: SCALE_WORKFLOWS,
      steps: SCALE_STEPS,
      latency_ms: LATENCY_MS,
      model_concurrency_per_instance: MODEL_CONCURRENCY,
    },
    one_instance: figures(one, 1),
    two_instances: figures(two, 2),
    speedup_2_over_1: r2(speedup),
    speedup_2_over_1_rounds: speedups.map(r2),
    meets_goal: speedup >= 1.8,
    rounds: SCALE_ROUNDS,
  };
}

// ── figures ──

async function main(): Promise<void> {
  log('starting a throwaway PostgreSQL cluster');
  const cluster = await startPostgresCluster();
  try {
    const version = await withClient(cluster.url, async (client) => {
      const { rows } = await client.query<{ server_version: string }>('SHOW server_version');
      return rows[0]?.server_version ?? 'unknown';
    });
    log(`Part A: CPU per step, ${ROUNDS} rounds of ${CONCURRENT_JOBS} jobs`);
    const cpu = PARTS.has('cpu') ? await partA(cluster) : { skipped: 'BENCH_SCALE_PARTS' };
    log(`Part B: ${SCALE_WORKFLOWS} workflows of ${SCALE_STEPS} steps at ${LATENCY_MS} ms, ${SCALE_ROUNDS} rounds`);
    const scaleOut = PARTS.has('scale-out') ? await partB(cluster) : { skipped: 'BENCH_SCALE_PARTS' };
    console.log(
      JSON.stringify({
        bench: 'scale',
        goal_cpu_ratio_postgres_over_sqlite_max: 2.5,
        goal_speedup_2_over_1_min: 1.8,
        cpu,
        scale_out: scaleOut,
        postgres: version,
        node: process.version,
      }),
    );
  } finally {
    await stopAll(started);
    cluster.stop();
    for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
