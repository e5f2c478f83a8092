/**
 * Span persistence throughput (docs/design.md#storage: "batched span inserts reach ~164k rows/s with
 * time-ordered ids"; goal here: ≥ 50k spans/s through the real commit path).
 *
 * What it measures: WORKFLOWS workflows in flight, each committing STEPS change sets through
 * `WorkflowStore.commit` (the group committer, one BEGIN IMMEDIATE per event-loop turn) into a real
 * SQLite file in os.tmpdir() (WAL, synchronous=NORMAL, checkpoints on a worker thread as deps.ts
 * runs them). Each change set is one engine step's span
 * writes, 4 of them: the end of the previous step's agent_span (with fields) and 3 inserts (a
 * handoff_span and a generation_span already ended, the step's new open agent_span), which the
 * store appends as one journal row (src/store/journal.repo.ts). Building the change sets (ids,
 * objects) is inside the timed region, as it is in the engine.
 * spans_per_s counts inserted spans; span_writes_per_s counts inserts + ends.
 *
 * The reference, measured in the same run on a fresh file: a bare better-sqlite3 loop inserting the
 * same number of similar rows, one row per span as spans were stored before the journal (prepared
 * statement, one JSON.stringify per row), in ONE transaction.
 *
 * Env: BENCH_SPANS_WORKFLOWS (default 500), BENCH_SPANS_STEPS (default 140).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { WorkflowDefinitionSchema } from '../src/domain/definition.js';
import { newId, newSpanId, newTraceId } from '../src/domain/ids.js';
import type { ChangeSet, WorkflowStore } from '../src/domain/ports.js';
import type { WorkflowRecord } from '../src/domain/records.js';
import type { SpanRecord } from '../src/domain/spans.js';
import { startCheckpointer } from '../src/store/sqlite/checkpointer.js';
import { type Db, openDatabase } from '../src/store/sqlite/db.js';
import { createGroupCommitter } from '../src/store/sqlite/group-commit.js';
import { createSqliteWorkflowStore } from '../src/store/sqlite/workflows.repo.js';

const WORKFLOWS = Number(process.env.BENCH_SPANS_WORKFLOWS ?? 500);
const STEPS = Number(process.env.BENCH_SPANS_STEPS ?? 140);
const INSERTS_PER_STEP = 3;

const definition = WorkflowDefinitionSchema.parse({
  name: 'bench-spans',
  agents: { writer: { model: 'sim/haiku' } },
  root: { type: 'prompt', name: 'draft', agent: 'writer', user: 'Say hi' },
});

function workflow(tenantId: string): WorkflowRecord {
  const id = newId('wf');
  return {
    id,
    tenantId,
    name: 'bench-spans',
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
    createdAt: Date.now(),
    startedAt: Date.now(),
    endedAt: null,
  };
}

function base(w: WorkflowRecord, parentId: string | null, now: number) {
  return {
    spanId: newSpanId(),
    traceId: w.traceId,
    workflowId: w.id,
    tenantId: w.tenantId,
    nodeId: null,
    parentId,
    startedAt: now,
  };
}

function generation(w: WorkflowRecord, parentId: string, now: number): SpanRecord {
  return {
    ...base(w, parentId, now),
    type: 'generation_span',
    endedAt: now + 250,
    status: 'ok',
    error: null,
    fields: {
      model: 'anthropic/claude-haiku-4-5',
      tokens_in: 812,
      tokens_out: 164,
      latency_ms: 250,
      cache_hit: false,
      cache_key: 'writer:3f7a9c0e5b1d2f4a6c8e0b1d3f5a7c9e1b3d5f7a9c0e2b4d6f8a0c2e4b6d8f0a',
      cost_usd: 0.00147,
    },
  };
}

async function runWorkflow(store: WorkflowStore, w: WorkflowRecord, rootSpanId: string): Promise<void> {
  let openAgent: string | null = null;
  for (let step = 0; step < STEPS; step++) {
    const now = Date.now();
    const handoff: SpanRecord = {
      ...base(w, rootSpanId, now),
      type: 'handoff_span',
      endedAt: now,
      status: 'ok',
      error: null,
      fields: { from_agent: 'orchestrator', to_agent: 'writer', context_passed: { keys: ['input'] } },
    };
    const agent: SpanRecord = {
      ...base(w, rootSpanId, now),
      type: 'agent_span',
      endedAt: null,
      status: null,
      error: null,
      fields: { agent_name: 'writer', instructions_hash: 'b1946ac92492d2347c6235b4d2611184', model: 'anthropic/haiku' },
    };
    const changes: ChangeSet = {
      spans: [
        openAgent === null
          ? { op: 'insert', span: generation(w, rootSpanId, now) }
          : {
              op: 'end',
              workflowId: w.id,
              tenantId: w.tenantId,
              spanId: openAgent,
              endedAt: now,
              status: 'ok',
              fields: { model: 'anthropic/claude-haiku' },
            },
        { op: 'insert', span: handoff },
        { op: 'insert', span: agent },
        { op: 'insert', span: generation(w, agent.spanId, now) },
      ],
    };
    await store.commit(changes);
    openAgent = agent.spanId;
  }
}

interface Measured {
  spans: number;
  writes: number;
  seconds: number;
}

async function throughStore(db: Db, workflows: number): Promise<Measured> {
  const committer = createGroupCommitter(db);
  const store = createSqliteWorkflowStore(db, committer);
  const running = Array.from({ length: workflows }, () => workflow('bench'));
  for (const w of running) await store.create({ workflow: w, nodes: [] });
  const roots = running.map(() => newSpanId());

  const started = performance.now();
  await Promise.all(running.map((w, i) => runWorkflow(store, w, roots[i] ?? '')));
  const seconds = (performance.now() - started) / 1000;
  // The first step has no agent span to end: it inserts one more generation instead.
  const spans = workflows * (STEPS * INSERTS_PER_STEP + 1);
  return { spans, writes: workflows * STEPS * 4, seconds };
}

/**
 * The ceiling: rows like the generation spans above (fresh time-ordered id, timestamps, one
 * JSON.stringify of the fields each), one prepared INSERT per row, all in ONE transaction.
 */
function bareInsert(db: Db, rows: number): number {
  const w = workflow('bench');
  db.prepare(
    'INSERT INTO workflows (id, tenant_id, name, status, root_workflow_id, trace_id, definition, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  ).run(w.id, w.tenantId, w.name, w.status, w.id, w.traceId, JSON.stringify(definition), w.createdAt);
  // The shape spans had as rows of their own table (before the journal, migrations/sqlite/0008).
  db.exec(`CREATE TABLE reference_spans (
    trace_id TEXT NOT NULL, span_id TEXT NOT NULL, workflow_id TEXT NOT NULL, tenant_id TEXT NOT NULL, node_id TEXT,
    parent_id TEXT, type TEXT NOT NULL, started_at INTEGER NOT NULL, ended_at INTEGER, status TEXT, error TEXT,
    fields TEXT NOT NULL, PRIMARY KEY (trace_id, span_id)) WITHOUT ROWID`);
  const insert = db.prepare(
    `INSERT INTO reference_spans (span_id, trace_id, workflow_id, tenant_id, node_id, parent_id, type, started_at, ended_at, status, error, fields)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const root = newSpanId();
  const { fields } = generation(w, root, 0);
  // The insert cost alone: no checkpoint folded into the COMMIT.
  db.pragma('wal_autocheckpoint = 0');
  const started = performance.now();
  db.transaction(() => {
    for (let i = 0; i < rows; i++) {
      const now = Date.now();
      const id = newSpanId();
      insert.run(
        id,
        w.traceId,
        w.id,
        w.tenantId,
        null,
        root,
        'generation_span',
        now,
        now + 250,
        'ok',
        null,
        JSON.stringify(fields),
      );
    }
  }).immediate();
  return rows / ((performance.now() - started) / 1000);
}

function withDb<T>(dir: string, name: string, body: (db: Db) => T): T {
  const db = openDatabase(join(dir, name), { synchronous: 'NORMAL' });
  try {
    return body(db);
  } finally {
    db.close();
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'baton-bench-spans-'));
  try {
    // Warm-up (JIT, statement caches) on its own file, then the measured runs on fresh files.
    const warm = openDatabase(join(dir, 'warmup.db'), { synchronous: 'NORMAL' });
    await throughStore(warm, Math.max(1, Math.floor(WORKFLOWS / 10)));
    warm.close();

    const path = join(dir, 'store.db');
    const db = openDatabase(path, { synchronous: 'NORMAL' });
    // As deps.ts runs it: WAL checkpoints on a worker thread, never inside a commit.
    const checkpointer = startCheckpointer(db, { path, intervalMs: 200, onError: (m) => console.error(m) });
    const measured = await throughStore(db, WORKFLOWS);
    await checkpointer.stop();
    const stored = db.prepare('SELECT count(*) FROM spans').pluck().get() as number;
    const open = db.prepare('SELECT count(*) FROM spans WHERE status IS NULL').pluck().get() as number;
    db.close();
    if (stored !== measured.spans || open !== WORKFLOWS) {
      throw new Error(`expected ${measured.spans} spans (${WORKFLOWS} open), found ${stored} (${open} open)`);
    }

    const reference = withDb(dir, 'bare.db', (bare) => bareInsert(bare, measured.spans));
    const line = {
      bench: 'spans',
      goal_spans_per_s: 50_000,
      spans_per_s: Math.round(measured.spans / measured.seconds),
      span_writes_per_s: Math.round(measured.writes / measured.seconds),
      reference_bare_insert_rows_per_s: Math.round(reference),
      spans: measured.spans,
      workflows_in_flight: WORKFLOWS,
      writes_per_change_set: 4,
      seconds: Math.round(measured.seconds * 1000) / 1000,
    };
    console.log(JSON.stringify(line));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
