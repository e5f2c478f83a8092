/**
 * What the usage roll-ups (migrations/sqlite/0022) add to the commit that ends a workflow.
 *
 * What it measures: COMMITS workflows, each ended by one `WorkflowStore.commit` through the group
 * committer into a real SQLite file (WAL, synchronous=NORMAL), one commit at a time: the final
 * change set the engine writes — the workflow's patch, its last events (two agentPromptEnd, a
 * cacheHit, workflowEnd), a guardrail span, two tool calls, its efficiency record and reward. The
 * roll-up triggers run inside that commit. B is the same commit on a file where the triggers were
 * dropped. A and B alternate for ROUNDS rounds on files that already hold HISTORY workflows; the
 * medians are reported, per commit, with their difference and ratio. The same for a step commit
 * before it (one event and one tool call, no record): what the roll-ups cost a workflow's other commits.
 *
 * Env: BENCH_ROLLUPS_COMMITS (default 1000), BENCH_ROLLUPS_ROUNDS (default 7),
 * BENCH_ROLLUPS_HISTORY (default 5000); BENCH_ROLLUPS_DROP=trigger,… drops those triggers on A too,
 * to see what each one costs.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { WorkflowDefinitionSchema } from '../src/domain/definition.js';
import type { WorkflowEvent } from '../src/domain/events.js';
import { newId, newSpanId, newTraceId } from '../src/domain/ids.js';
import type { ChangeSet, WorkflowStore } from '../src/domain/ports.js';
import type { WorkflowRecord } from '../src/domain/records.js';
import { type Db, openDatabase } from '../src/store/sqlite/db.js';
import { createGroupCommitter } from '../src/store/sqlite/group-commit.js';
import { createSqliteWorkflowStore } from '../src/store/sqlite/workflows.repo.js';
import { writeUsageHistory } from '../test/support/usage-history.js';

const COMMITS = Number(process.env.BENCH_ROLLUPS_COMMITS ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROLLUPS_ROUNDS ?? 7);
const HISTORY = Number(process.env.BENCH_ROLLUPS_HISTORY ?? 5000);
const TENANT = 'bench';
const TRIGGERS = [
  'efficiency_usage_rollup_insert',
  'efficiency_usage_rollup_update',
  'journal_usage_rollup',
  'rewards_usage_rollup_insert',
  'rewards_usage_rollup_update',
  'tool_calls_usage_rollup',
  'retrieval_runs_usage_rollup',
];

const definition = WorkflowDefinitionSchema.parse({
  name: 'bench-rollups',
  agents: { writer: { model: 'sim/haiku' } },
  root: { type: 'prompt', name: 'draft', agent: 'writer', user: 'Say hi' },
});

function workflow(): WorkflowRecord {
  const id = newId('wf');
  const now = Date.now();
  return {
    id,
    tenantId: TENANT,
    name: 'bench-rollups',
    status: 'running',
    correlationId: null,
    parentWorkflowId: null,
    parentNodeId: null,
    rootWorkflowId: id,
    depth: 0,
    traceId: newTraceId(),
    definition,
    output: null,
    error: null,
    cancelRequested: false,
    checkpoint: null,
    routing: null,
    createdAt: now,
    startedAt: now,
    endedAt: null,
  };
}

function finalCommit(w: WorkflowRecord, i: number): ChangeSet {
  const now = Date.now();
  const model = i % 2 === 0 ? 'sim/haiku' : 'anthropic/claude-sonnet-4';
  const envelope = (seq: number) => ({ workflowId: w.id, tenantId: TENANT, seq, nodeId: null, at: now });
  const end = (seq: number, duration: number) =>
    ({
      ...envelope(seq),
      type: 'agentPromptEnd',
      payload: {
        node: 'draft',
        attempt: 1,
        model,
        duration,
        requests: 1,
        tokenUsage: { inputTokens: 800, outputTokens: 160 },
      },
    }) as unknown as WorkflowEvent;
  const events = [
    end(1, 420 + (i % 300)),
    end(2, 900 + (i % 700)),
    {
      ...envelope(3),
      type: 'cacheHit',
      payload: {
        key: `k${i}`,
        node: 'draft',
        model,
        tokenUsage: { inputTokens: 800, outputTokens: 160 },
        costSavedUsd: 0.001,
      },
    } as unknown as WorkflowEvent,
    { ...envelope(4), type: 'workflowEnd', payload: { status: 'completed' } } as unknown as WorkflowEvent,
  ];
  const iso = new Date(now).toISOString();
  const tier = { calls: 0, est_tokens: 0 };
  return {
    workflows: [{ id: w.id, status: 'completed', endedAt: now }],
    events,
    spans: [
      {
        op: 'insert',
        span: {
          spanId: newSpanId(),
          traceId: w.traceId,
          workflowId: w.id,
          tenantId: TENANT,
          nodeId: null,
          parentId: null,
          startedAt: now,
          type: 'guardrail_span',
          endedAt: now,
          status: 'ok',
          error: null,
          fields: { guardrail_name: 'response_format', triggered: false, blocking: true },
        },
      },
    ],
    toolCalls: [1, 2].map((k) => ({
      tenantId: TENANT,
      workflowId: w.id,
      nodeId: 'draft',
      tool: k === 1 ? 'grep' : 'read',
      agent: 'writer',
      model,
      success: true,
      latencyMs: 12,
      resultBytes: 300,
      at: now,
    })),
    efficiency: [
      {
        tenant_id: TENANT,
        task_id: w.id,
        correlation_id: null,
        task_type: 'explore',
        complexity: 'simple',
        started_at: iso,
        completed_at: iso,
        metrics: {
          wall_time_seconds: 2.5,
          agents_spawned: 1,
          total_agent_calls: 2,
          provider_requests: 2,
          retry_count: 0,
          retry_reasons: [],
          recovery_rate: null,
          model_usage: { haiku: tier, sonnet: tier, opus: tier, other: tier },
          by_model: { [model]: { calls: 2, requests: 2, tokens_in: 1600, tokens_out: 320, cost_usd: 0.004 } },
          cache_hits: 1,
        },
        outcome: 'success',
        outcome_reason: 'review_approved',
        efficiency_score: 0.8,
        efficiency_factors: [],
        quality_pillars: {
          tool_selection_correct: true,
          tool_reliability_rate: 1,
          memory_retrieval_relevant: null,
          goal_adherence: 0.9,
        },
        subtree: null,
      },
    ],
    rewards: [
      {
        tenant_id: TENANT,
        workflow_id: w.id,
        task_type: 'explore',
        complexity: 'simple',
        outcome_reward: 1,
        efficiency_reward: 0.8,
        preference_reward: null,
        aggregate_reward: 0.86,
        created_at: iso,
        updated_at: iso,
      },
    ],
  } as ChangeSet;
}

interface Side {
  db: Db;
  store: WorkflowStore;
}

function open(dir: string, name: string, rollups: boolean): Side {
  const path = join(dir, `${name}.db`);
  writeUsageHistory({ dbPath: path, tenantId: TENANT, calls: HISTORY * 2, days: 30, now: Date.now() });
  const db = openDatabase(path, { synchronous: 'NORMAL' });
  db.pragma('wal_autocheckpoint = 0');
  const dropped = rollups ? (process.env.BENCH_ROLLUPS_DROP?.split(',').filter(Boolean) ?? []) : TRIGGERS;
  for (const trigger of dropped) db.exec(`DROP TRIGGER ${trigger}`);
  return { db, store: createSqliteWorkflowStore(db, createGroupCommitter(db)) };
}

/**
 * ms per final commit, over COMMITS workflows created beforehand: CPU time of this process (the
 * commit is synchronous work on the event loop; synchronous=NORMAL does not fsync a WAL commit), so
 * other processes on a shared machine move it less than wall time; wall time is reported beside it.
 */
/**
 * As the service runs (store/sqlite/checkpointer.ts): no checkpoint folded into a commit, the WAL copied
 * back elsewhere. What that copy will cost is the WAL the commits wrote, reported per commit.
 */
async function timedCommits(side: Side, changes: ChangeSet[]): Promise<Timing> {
  side.db.pragma('wal_checkpoint(TRUNCATE)');
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (const c of changes) await side.store.commit(c);
  const wall = (performance.now() - started) / changes.length;
  const used = process.cpuUsage(cpu);
  const walBytes = statSync(`${side.db.name}-wal`).size / changes.length;
  return { cpu: (used.user + used.system) / 1000 / changes.length, wall, walBytes };
}

interface Timing {
  cpu: number;
  wall: number;
  walBytes: number;
}

interface Round {
  final: Timing;
  step: Timing;
}

/** A step commit of each workflow (its first prompt's events and tool call), then its final commit. */
async function round(side: Side): Promise<Round> {
  const running = Array.from({ length: COMMITS }, workflow);
  for (const w of running) await side.store.create({ workflow: w, nodes: [] });
  const step = await timedCommits(
    side,
    running.map((w, i) => {
      const { events, toolCalls } = finalCommit(w, i);
      return { events: events?.slice(0, 1).map((e) => ({ ...e, seq: 0 })), toolCalls: toolCalls?.slice(0, 1) };
    }),
  );
  const final = await timedCommits(
    side,
    running.map((w, i) => finalCommit(w, i)),
  );
  return { final, step };
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

const dir = mkdtempSync(join(tmpdir(), 'baton-bench-rollups-'));
try {
  const withRollups = open(dir, 'a', true);
  const without = open(dir, 'b', false);
  await round(withRollups);
  await round(without);
  const a: Round[] = [];
  const b: Round[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    a.push(await round(withRollups));
    b.push(await round(without));
  }
  const figures = (kind: keyof Round) => {
    const [ca, cb] = [median(a.map((x) => x[kind].cpu)), median(b.map((x) => x[kind].cpu))];
    const [wa, wb] = [median(a.map((x) => x[kind].wall)), median(b.map((x) => x[kind].wall))];
    return {
      cpu_ms_per_commit: { with_rollups: +ca.toFixed(4), without: +cb.toFixed(4) },
      added_cpu_ms_per_commit: +(ca - cb).toFixed(4),
      ratio: +(ca / cb).toFixed(3),
      wall_ms_per_commit: { with_rollups: +wa.toFixed(4), without: +wb.toFixed(4), ratio: +(wa / wb).toFixed(3) },
      wal_bytes_per_commit: {
        with_rollups: Math.round(median(a.map((x) => x[kind].walBytes))),
        without: Math.round(median(b.map((x) => x[kind].walBytes))),
      },
      rounds_cpu_a: a.map((x) => +x[kind].cpu.toFixed(4)),
      rounds_cpu_b: b.map((x) => +x[kind].cpu.toFixed(4)),
    };
  };
  const rolled = withRollups.db
    .prepare('SELECT sum(tasks) AS tasks FROM usage_rollup WHERE tenant_id = ? AND grain = 1')
    .get(TENANT);
  console.log(
    JSON.stringify(
      {
        commits_per_round: COMMITS,
        rounds: ROUNDS,
        history_workflows: HISTORY,
        final_commit: figures('final'),
        step_commit: figures('step'),
        rolled_up_tasks: rolled,
      },
      null,
      1,
    ),
  );
  withRollups.db.close();
  without.db.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
