/**
 * The 10-step job over HTTP + SSE, black-box, against the LangGraph.js peer in the same run
 * (docs/design.md#tests-and-checks: server CPU per step ≥ 6× lower than LangGraph.js + SqliteSaver's on the same job).
 *
 * Each server under test is its own child process on 127.0.0.1:0 (bench/lib/http-job.ts):
 *   - baton: `node --import tsx src/main.ts` with its default config (temp DATABASE_PATH,
 *     LOG_LEVEL=warn, rate limit off); a job is POST /v1/workflows of a `sequence` of 10 `prompt`
 *     nodes on sim/haiku at zero latency, cache off, each with a ~1 KB user text and a
 *     responseFormat whose simulated answer is ~200 B of JSON; then GET …/events as SSE until
 *     `workflowEnd`, then GET /v1/workflows/{id} (completed, output checked);
 *   - langgraph: bench/peers/langgraph/server.ts, the same job as a StateGraph with a SqliteSaver
 *     (`npm run bench:peers` installs it; skipped, and said so in the line, when it is missing);
 *   - harness: bench/lib/harness-server.ts, a bare node:http server answering the same requests with
 *     canned replies (10 step frames and an end frame): the floor of the HTTP traffic itself.
 *
 * Figures per server, each the median over BENCH_ROUNDS rounds; rounds interleave the servers so
 * that the noise of a shared machine hits all of them:
 *   - cpu_us_per_step (the headline): utime+stime of the server's process tree (/proc/<pid>/stat,
 *     every thread, children included) over the 16-in-flight phase / steps completed; the phase ends
 *     after a quiet 500 ms, so work a server defers past the end of its jobs is counted;
 *   - cpu_us_per_step_1_in_flight: the same over the sequential phase;
 *   - latency_us_per_step_median / _p99: job wall time (POST sent → end of the event stream) / 10,
 *     one job in flight;
 *   - steps_per_s_16_in_flight: steps / wall time of the 16-in-flight phase (confirming GETs included);
 *   - wal_frames_per_step: WAL frames appended (the server's own counter: baton's
 *     baton_sqlite_wal_frames_total on GET /metrics, the peer's GET /stats, same rule) / steps.
 * Ratios (langgraph / baton) are taken per round, between the two measured back to back, then the
 * median. Env: BENCH_WARMUP (jobs per server, default 300), BENCH_ROUNDS (5), BENCH_SEQ_JOBS
 * (sequential jobs per round, 100), BENCH_CONCURRENT_JOBS (16-in-flight jobs per round, 400).
 * For a CPU profile of a server during the 16-in-flight phase, see bench/profile-http.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { median, percentile, r1, r2 } from './lib/figures.js';
import {
  ANSWER_JSON,
  BODY,
  descendants,
  IN_FLIGHT,
  peerInstalled,
  runJobs,
  type Server,
  STEPS,
  settledWalFrames,
  sleep,
  startServer,
  type TargetName,
  TEXT,
  treeCpuUs,
  userText,
} from './lib/http-job.js';

const WARMUP = Number(process.env.BENCH_WARMUP ?? 300);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SEQ_JOBS = Number(process.env.BENCH_SEQ_JOBS ?? 100);
const CONCURRENT_JOBS = Number(process.env.BENCH_CONCURRENT_JOBS ?? 400);
/** Quiet time after a phase before its CPU is read: deferred work lands in the phase that caused it. */
const QUIET_MS = 500;

interface Phase {
  cpuUsPerStep: number;
  walFramesPerStep: number | null;
  wallMs: number;
  jobMs: number[];
  clientCpuUsPerStep: number;
}

async function phase(server: Server, jobs: number, inFlight: number): Promise<Phase> {
  const walBefore = await settledWalFrames(server);
  const cpuBefore = treeCpuUs(server.pid);
  const clientBefore = process.cpuUsage();
  const start = performance.now();
  const results = await runJobs(server, jobs, inFlight);
  const wallMs = performance.now() - start;
  const client = process.cpuUsage(clientBefore);
  await sleep(QUIET_MS);
  const cpu = treeCpuUs(server.pid) - cpuBefore;
  const walAfter = await settledWalFrames(server);
  const steps = jobs * STEPS;
  return {
    cpuUsPerStep: cpu / steps,
    walFramesPerStep: walBefore === null || walAfter === null ? null : (walAfter - walBefore) / steps,
    wallMs,
    jobMs: results.map((r) => r.wallMs),
    clientCpuUsPerStep: (client.user + client.system) / steps,
  };
}

interface Round {
  cpu16: number;
  cpu1: number;
  p50: number;
  p99: number;
  stepsPerS: number;
  wal16: number | null;
  wal1: number | null;
  clientCpu16: number;
}

async function round(server: Server): Promise<Round> {
  const seq = await phase(server, SEQ_JOBS, 1);
  const concurrent = await phase(server, CONCURRENT_JOBS, IN_FLIGHT);
  const perStepUs = seq.jobMs.map((ms) => (ms * 1000) / STEPS).sort((a, b) => a - b);
  return {
    cpu16: concurrent.cpuUsPerStep,
    cpu1: seq.cpuUsPerStep,
    p50: percentile(perStepUs, 50),
    p99: percentile(perStepUs, 99),
    stepsPerS: (CONCURRENT_JOBS * STEPS * 1000) / concurrent.wallMs,
    wal16: concurrent.walFramesPerStep,
    wal1: seq.walFramesPerStep,
    clientCpu16: concurrent.clientCpuUsPerStep,
  };
}

function summary(rounds: readonly Round[], server: Server) {
  const wal16 = rounds.map((r) => r.wal16);
  const wal1 = rounds.map((r) => r.wal1);
  return {
    cpu_us_per_step: r1(median(rounds.map((r) => r.cpu16))),
    cpu_us_per_step_1_in_flight: r1(median(rounds.map((r) => r.cpu1))),
    latency_us_per_step_median: r1(median(rounds.map((r) => r.p50))),
    latency_us_per_step_p99: r1(median(rounds.map((r) => r.p99))),
    steps_per_s_16_in_flight: Math.round(median(rounds.map((r) => r.stepsPerS))),
    wal_frames_per_step: wal16.includes(null) ? null : r2(median(wal16 as number[])),
    wal_frames_per_step_1_in_flight: wal1.includes(null) ? null : r2(median(wal1 as number[])),
    client_cpu_us_per_step: r1(median(rounds.map((r) => r.clientCpu16))),
    cpu_us_per_step_rounds: rounds.map((r) => Math.round(r.cpu16)),
    child_processes: descendants(server.pid),
  };
}

async function main(): Promise<void> {
  const names: TargetName[] = ['baton', 'harness'];
  const peer = peerInstalled();
  if (peer) names.splice(1, 0, 'langgraph');
  const dirs: string[] = [];
  const servers: Server[] = [];
  try {
    for (const name of names) {
      const dir = mkdtempSync(join(tmpdir(), `baton-bench-http-${name}-`));
      dirs.push(dir);
      servers.push(await startServer(name, { dir }));
    }
    for (const server of servers) {
      await runJobs(server, Math.ceil(WARMUP / 3), 1);
      await runJobs(server, WARMUP - Math.ceil(WARMUP / 3), IN_FLIGHT);
    }
    const rounds = new Map<TargetName, Round[]>(names.map((name) => [name, []]));
    for (let i = 0; i < ROUNDS; i++) {
      // Alternate the order too, so neither baton nor the peer always runs right after the other.
      const order = i % 2 === 0 ? servers : [...servers].reverse();
      for (const server of order) rounds.get(server.name)?.push(await round(server));
    }

    const baton = rounds.get('baton') ?? [];
    const langgraph = rounds.get('langgraph') ?? [];
    const harness = rounds.get('harness') ?? [];
    const byName = (name: TargetName) => servers.find((s) => s.name === name) as Server;
    const line = {
      bench: 'http-steps',
      goal_cpu_ratio_langgraph_over_baton: 6,
      job: {
        steps: STEPS,
        prompt_bytes: Buffer.byteLength(userText(1)),
        text_bytes: Buffer.byteLength(TEXT),
        answer_bytes: Buffer.byteLength(ANSWER_JSON),
        post_bytes: Buffer.byteLength(BODY),
      },
      baton: summary(baton, byName('baton')),
      langgraph: peer
        ? summary(langgraph, byName('langgraph'))
        : { skipped: 'bench/peers/langgraph is not installed: run `npm run bench:peers` once' },
      harness: summary(harness, byName('harness')),
      ratios: peer
        ? {
            langgraph_cpu_per_step_over_baton: r2(median(baton.map((b, i) => (langgraph[i]?.cpu16 ?? 0) / b.cpu16))),
            langgraph_cpu_per_step_over_baton_1_in_flight: r2(
              median(baton.map((b, i) => (langgraph[i]?.cpu1 ?? 0) / b.cpu1)),
            ),
            baton_steps_per_s_over_langgraph: r2(
              median(baton.map((b, i) => b.stepsPerS / (langgraph[i]?.stepsPerS ?? Number.NaN))),
            ),
          }
        : null,
      rounds: ROUNDS,
      warmup_jobs: WARMUP,
      jobs_per_round: { one_in_flight: SEQ_JOBS, sixteen_in_flight: CONCURRENT_JOBS },
      node: process.version,
    };
    console.log(JSON.stringify(line));
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
