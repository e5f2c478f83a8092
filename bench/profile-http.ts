/**
 * Where a server's time goes during bench/http-steps.ts's 16-in-flight phase: starts the server
 * (baton by default) under `node --cpu-prof`, warms it up, runs BENCH_PROFILE_JOBS jobs with 16 in
 * flight, stops it (the profile is written at exit), cuts the profile down to the samples taken
 * during that phase (V8's profile clock and process.hrtime are both CLOCK_MONOTONIC) and prints
 * bench/profile-summary.ts's tables for it.
 *
 *   BENCH_PROFILE_DIR=/tmp/prof npx tsx bench/profile-http.ts                    # baton
 *   BENCH_PROFILE_DIR=/tmp/prof BENCH_PROFILE_TARGET=langgraph npx tsx bench/profile-http.ts
 *   npx tsx bench/profile-summary.ts /tmp/prof/baton-16-in-flight.cpuprofile --top 40
 *
 * Env: BENCH_PROFILE_DIR (default: a new temp dir), BENCH_PROFILE_TARGET (baton | langgraph |
 * harness), BENCH_PROFILE_JOBS (default 1500), BENCH_WARMUP (default 300), BENCH_PROFILE_TOP (25).
 * The untrimmed profiles (start-up included, one per thread) stay in <dir>/raw/.
 * Not part of `npm run bench`: sampling slows the server, so its figures are not the bench's.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  IN_FLIGHT,
  peerInstalled,
  REPO_ROOT,
  runJobs,
  STEPS,
  startServer,
  type TargetName,
  treeCpuUs,
} from './lib/http-job.js';

const TARGET = (process.env.BENCH_PROFILE_TARGET ?? 'baton') as TargetName;
const JOBS = Number(process.env.BENCH_PROFILE_JOBS ?? 1500);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 300);
const TOP = process.env.BENCH_PROFILE_TOP ?? '25';

interface CpuProfile {
  nodes: unknown[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const monotonicUs = (): number => Number(process.hrtime.bigint() / 1000n);

/** The samples of `profile` taken within [fromUs, toUs] (CLOCK_MONOTONIC µs), as a profile of that window. */
function window(profile: CpuProfile, fromUs: number, toUs: number): CpuProfile {
  const samples: number[] = [];
  const timeDeltas: number[] = [];
  let at = profile.startTime;
  let last = fromUs;
  profile.samples.forEach((sample, i) => {
    at += profile.timeDeltas[i] ?? 0;
    if (at < fromUs || at > toUs) return;
    samples.push(sample);
    timeDeltas.push(at - last);
    last = at;
  });
  return { nodes: profile.nodes, startTime: fromUs, endTime: toUs, samples, timeDeltas };
}

async function main(): Promise<void> {
  if (!['baton', 'langgraph', 'harness'].includes(TARGET)) throw new Error(`BENCH_PROFILE_TARGET=${TARGET}?`);
  if (TARGET === 'langgraph' && !peerInstalled()) throw new Error('run `npm run bench:peers` first');
  const dir = process.env.BENCH_PROFILE_DIR ?? mkdtempSync(join(tmpdir(), 'baton-profile-'));
  const raw = join(dir, 'raw');
  mkdirSync(raw, { recursive: true });
  const dbDir = mkdtempSync(join(tmpdir(), `baton-profile-${TARGET}-db-`));
  const server = await startServer(TARGET, { dir: dbDir, nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${raw}`] });
  let from = 0;
  let to = 0;
  let cpuUs = 0;
  try {
    await runJobs(server, Math.ceil(WARMUP / 3), 1);
    await runJobs(server, WARMUP - Math.ceil(WARMUP / 3), IN_FLIGHT);
    const cpuBefore = treeCpuUs(server.pid);
    from = monotonicUs();
    await runJobs(server, JOBS, IN_FLIGHT);
    to = monotonicUs();
    cpuUs = treeCpuUs(server.pid) - cpuBefore;
  } finally {
    await server.stop();
    rmSync(dbDir, { recursive: true, force: true });
  }

  // Node names profiles CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile; thread 0 is the main thread.
  const main = readdirSync(raw).find((f) => f.includes(`.${server.pid}.0.`) && f.endsWith('.cpuprofile'));
  if (main === undefined) throw new Error(`no main-thread profile of pid ${server.pid} in ${raw}`);
  const profile = JSON.parse(readFileSync(join(raw, main), 'utf8')) as CpuProfile;
  const cut = window(profile, from, to);
  if (cut.samples.length === 0) {
    throw new Error(
      `no sample within the phase (profile ${profile.startTime}–${profile.endTime} µs, phase ${from}–${to})`,
    );
  }
  const out = join(dir, `${TARGET}-16-in-flight.cpuprofile`);
  writeFileSync(out, JSON.stringify(cut));

  const steps = JOBS * STEPS;
  console.log(
    `${TARGET}, ${JOBS} jobs (${steps} steps) with ${IN_FLIGHT} in flight under --cpu-prof: ` +
      `${Math.round((steps * 1e6) / (to - from))} steps/s, ${Math.round(cpuUs / steps)} µs CPU per step (all threads); ` +
      `main-thread samples in the phase: ${cut.samples.length}\n`,
  );
  const summary = spawnSync(process.execPath, ['--import', 'tsx', 'bench/profile-summary.ts', out, '--top', TOP], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
  });
  process.stdout.write(summary.stdout);
  process.stderr.write(summary.stderr);
  if (summary.status !== 0) process.exit(summary.status ?? 1);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
