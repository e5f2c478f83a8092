/**
 * Executor hot path (docs/design.md#tests-and-checks goal: ≤ 40 µs per step median, p99 of a 10-step run ≤ 2 ms).
 *
 * What it measures: one workflow = a `sequence` of 10 `prompt` nodes on `sim/haiku` (zero latency,
 * no simulate script), driven through createDeps + executor directly (no HTTP), with everything
 * persisted to a real SQLite file in os.tmpdir() (WAL, default synchronous=NORMAL). A run's wall
 * time goes from `executor.submit` (validation, planning, the insert commit) to the publication
 * of its committed `workflowEnd` event on `deps.events`, so it is what a caller waiting for the
 * result sees; per-step = run / 10. Runs are sequential (one in flight) for the latency figures,
 * then 16 in flight for throughput.
 *
 * Why a reference: the same process also times a bare loop of 10 awaited async functions doing
 * comparable trivial work, so the figure can be read as "framework overhead over plain awaits"
 * on whatever machine runs it.
 *
 * Env: BENCH_WARMUP (default 300), BENCH_RUNS (default 3000), BENCH_CONCURRENT_RUNS (default 3000).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { loadConfig } from '../src/config.js';
import { createDeps, type Deps } from '../src/deps.js';
import { type WorkflowDefinition, WorkflowDefinitionSchema } from '../src/domain/definition.js';
import { percentile } from './lib/figures.js';

const STEPS = 10;
const WARMUP = Number(process.env.BENCH_WARMUP ?? 300);
const RUNS = Number(process.env.BENCH_RUNS ?? 3000);
const CONCURRENT_RUNS = Number(process.env.BENCH_CONCURRENT_RUNS ?? 3000);
const IN_FLIGHT = 16;

const definition: WorkflowDefinition = WorkflowDefinitionSchema.parse({
  name: 'bench-sequence',
  input: { topic: 'benchmarks' },
  agents: { writer: { model: 'sim/haiku', system: 'You write one short sentence.' } },
  // docs/design.md#tests-and-checks measures the executor with the cache off: every step is a (simulated) provider
  // call.
  options: { cache: false },
  root: {
    type: 'sequence',
    name: 'main',
    steps: Array.from({ length: STEPS }, (_, i) => ({
      type: 'prompt',
      name: `step-${i}`,
      agent: 'writer',
      user: `Step ${i}: say something about {{input.topic}}.`,
    })),
  },
});

/** Submits one workflow and resolves when its committed workflowEnd event is published. */
async function runOnce(deps: Deps): Promise<void> {
  const result = await deps.executor.submit('bench', definition);
  if (result.kind !== 'created') throw new Error(`submit answered ${result.kind}`);
  const id = result.workflow.id;
  // The run cannot reach workflowEnd before this subscription: every step waits for a group commit,
  // which happens on a later event-loop turn (setImmediate) than the one submit resolved in.
  await new Promise<void>((resolve, reject) => {
    const unsubscribe = deps.events.subscribe(id, (event) => {
      if (event.type !== 'workflowEnd') return;
      unsubscribe();
      if (event.payload.status === 'completed') resolve();
      else reject(new Error(`workflow ${id} ended ${String(event.payload.status)}: ${JSON.stringify(event.payload)}`));
    });
  });
}

const round = (value: number, digits = 1): number => Math.round(value * 10 ** digits) / 10 ** digits;

// ── reference: 10 awaited async functions doing work comparable to the sim provider's answer ──

let sink = 0;
async function trivialStep(i: number, previous: string): Promise<string> {
  const text = `[simulated haiku] Step ${i}: say something about ${previous.length > 40 ? 'benchmarks' : previous}.`;
  const result = { text, usage: { inputTokens: Math.ceil(text.length / 4), outputTokens: 1 }, stopReason: 'end_turn' };
  sink += result.usage.inputTokens;
  return result.text;
}

async function bareLoop(): Promise<void> {
  let previous = 'benchmarks';
  for (let i = 0; i < STEPS; i++) previous = await trivialStep(i, previous);
}

async function measureReference(): Promise<number> {
  for (let i = 0; i < 20_000; i++) await bareLoop();
  const iterations = 200_000;
  const start = performance.now();
  for (let i = 0; i < iterations; i++) await bareLoop();
  const elapsedMs = performance.now() - start;
  return (elapsedMs * 1000) / (iterations * STEPS);
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'baton-bench-executor-'));
  const config = loadConfig({ DATABASE_PATH: join(dir, 'bench.db'), LOG_LEVEL: 'silent' });
  const deps = await createDeps(config);
  try {
    await deps.executor.start();

    for (let i = 0; i < WARMUP; i++) await runOnce(deps);

    const runMs: number[] = [];
    const cpuBefore = process.cpuUsage();
    for (let i = 0; i < RUNS; i++) {
      const start = performance.now();
      await runOnce(deps);
      runMs.push(performance.now() - start);
    }
    const cpu = process.cpuUsage(cpuBefore);
    const sequentialTotalMs = runMs.reduce((a, b) => a + b, 0);
    runMs.sort((a, b) => a - b);

    // 16 workflows in flight: each worker starts its next run as soon as its previous one ends.
    let started = 0;
    const concurrentStart = performance.now();
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (started < CONCURRENT_RUNS) {
          started++;
          await runOnce(deps);
        }
      }),
    );
    const concurrentMs = performance.now() - concurrentStart;

    const referenceUsPerStep = await measureReference();

    const medianRunMs = percentile(runMs, 50);
    const p99RunMs = percentile(runMs, 99);
    const line = {
      bench: 'executor',
      goal_us_per_step: 40,
      median_us_per_step: round((medianRunMs * 1000) / STEPS),
      p99_us_per_step: round((p99RunMs * 1000) / STEPS),
      p99_ms_per_run: round(p99RunMs, 3),
      goal_p99_ms_per_run: 2,
      max_ms_per_run: round(runMs[runMs.length - 1] ?? Number.NaN, 3),
      // CPU (user+system, all threads) per step over the sequential runs: less sensitive to a busy machine.
      cpu_us_per_step: round((cpu.user + cpu.system) / (RUNS * STEPS)),
      runs_per_s: round((RUNS * 1000) / sequentialTotalMs),
      reference_bare_loop_us_per_step: round(referenceUsPerStep, 3),
      concurrent16_steps_per_s: Math.round((CONCURRENT_RUNS * STEPS * 1000) / concurrentMs),
      runs: RUNS,
      warmup: WARMUP,
      includes: 'submit+plan+insert commit, 10 steps, workflowEnd commit; sequence of 10 prompt nodes on sim/haiku',
      node: process.version,
    };
    if (sink < 0) console.error(sink); // keeps the reference work observable
    console.log(JSON.stringify(line));
  } finally {
    await deps.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
