import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newSpanId } from '../../../src/domain/ids.js';
import { openDatabase } from '../../../src/store/sqlite/db.js';
import { createGroupCommitter } from '../../../src/store/sqlite/group-commit.js';
import { createSqliteTraceStore } from '../../../src/store/sqlite/spans.repo.js';
import { createSqliteWorkflowStore } from '../../../src/store/sqlite/workflows.repo.js';
import { databaseAtSchema, newWorkflow, tempDir } from '../../support/store-fixtures.js';

/**
 * Migration 0008 moves the events and spans tables into the journal. A database written by the
 * build before it (schema 7) must read back the same events and spans through the stores, and
 * keep answering SQL on `events` and `spans` (now views).
 */

const T0 = 1_700_000_000_000;
const WORKFLOW_START = '{"name":"review-pr","parentWorkflowId":null}';
const STEP_START = '{"node":"draft","type":"prompt","attempt":1}';

let dir: ReturnType<typeof tempDir>;
beforeEach(() => {
  dir = tempDir();
});
afterEach(() => dir.remove());

describe('migration 0008 (journal)', () => {
  it('moves old events and spans into the journal: the stores and the views read them back', async () => {
    const path = join(dir.dir, 'old.db');
    const old = databaseAtSchema(path, 7);
    const { workflow, nodes } = newWorkflow({ tenantId: 'acme' });
    old
      .prepare(
        `INSERT INTO workflows (id, tenant_id, name, status, root_workflow_id, trace_id, definition, created_at)
         VALUES (?, ?, ?, 'running', ?, ?, ?, ?)`,
      )
      .run(workflow.id, 'acme', workflow.name, workflow.id, workflow.traceId, JSON.stringify(workflow.definition), T0);
    const prompt = nodes[1]!;
    const insertEvent = old.prepare(
      'INSERT INTO events (workflow_id, seq, tenant_id, type, node_id, at, payload) VALUES (?, ?, ?, ?, ?, ?, ?)',
    );
    // Inserted out of order: the migration keeps seq order.
    insertEvent.run(workflow.id, 2, 'acme', 'stepStart', prompt.id, T0 + 2, STEP_START);
    insertEvent.run(workflow.id, 1, 'acme', 'workflowStart', null, T0 + 1, WORKFLOW_START);
    const closed = newSpanId();
    const open = newSpanId();
    const insertSpan = old.prepare(
      `INSERT INTO spans (trace_id, span_id, workflow_id, tenant_id, node_id, parent_id, type, started_at, ended_at, status, error, fields)
       VALUES (?, ?, ?, 'acme', ?, NULL, ?, ?, ?, ?, ?, ?)`,
    );
    insertSpan.run(
      workflow.traceId,
      closed,
      workflow.id,
      prompt.id,
      'guardrail_span',
      T0,
      T0 + 3,
      'error',
      JSON.stringify({ code: 'X', message: 'y' }),
      JSON.stringify({ guardrail_name: 'g', triggered: true, blocking: true }),
    );
    insertSpan.run(
      workflow.traceId,
      open,
      workflow.id,
      null,
      'agent_span',
      T0 + 1,
      null,
      null,
      null,
      '{"agent_name":"a"}',
    );
    // Two generations, one of them simulated by its model name only (written before the flag existed).
    const generation = (model: string, cost: number) =>
      JSON.stringify({
        model,
        tokens_in: 10,
        tokens_out: 2,
        latency_ms: 1,
        cache_hit: false,
        cache_key: null,
        cost_usd: cost,
      });
    const real = newSpanId();
    const simulated = newSpanId();
    for (const [id, model, cost] of [
      [real, 'anthropic/x', 0.25],
      [simulated, 'sim/haiku', 0.5],
    ] as const) {
      insertSpan.run(
        workflow.traceId,
        id,
        workflow.id,
        null,
        'generation_span',
        T0,
        T0 + 1,
        'ok',
        null,
        generation(model, cost),
      );
    }
    old.close();

    const db = openDatabase(path, { synchronous: 'NORMAL' });
    try {
      const committer = createGroupCommitter(db);
      const store = createSqliteWorkflowStore(db, committer);
      const traces = createSqliteTraceStore(db, committer);

      const events = await store.events(workflow.id, 0, 10);
      expect(events.map((e) => [e.seq, e.type, e.nodeId, e.at, e.tenantId])).toEqual([
        [1, 'workflowStart', null, T0 + 1, 'acme'],
        [2, 'stepStart', prompt.id, T0 + 2, 'acme'],
      ]);
      expect(await store.lastSeq(workflow.id)).toBe(2);

      const trace = await traces.trace('acme', workflow.traceId);
      expect(trace?.spans.map((s) => [s.spanId, s.type, s.status, s.endedAt, s.error])).toEqual([
        [closed, 'guardrail_span', 'error', T0 + 3, { code: 'X', message: 'y' }],
        [open, 'agent_span', null, null, null],
        [real, 'generation_span', 'ok', T0 + 1, null],
        [simulated, 'generation_span', 'ok', T0 + 1, null],
      ]);
      expect(await traces.generationUsage('acme', workflow.traceId)).toEqual([
        { workflowId: workflow.id, calls: 2, tokensIn: 20, tokensOut: 4, costUsd: 0.25, simulatedCostUsd: 0.5 },
      ]);

      // A resumed run closes the old open span through the journal; the views show both states.
      expect(await traces.interruptOpenSpans(workflow.id, T0 + 10)).toBe(1);
      expect(db.prepare('SELECT span_id, status, ended_at, error FROM spans ORDER BY span_id').all()).toEqual([
        { span_id: closed, status: 'error', ended_at: T0 + 3, error: '{"code":"X","message":"y"}' },
        { span_id: open, status: 'interrupted', ended_at: T0 + 10, error: null },
        { span_id: real, status: 'ok', ended_at: T0 + 1, error: null },
        { span_id: simulated, status: 'ok', ended_at: T0 + 1, error: null },
      ]);
      expect(db.prepare('SELECT seq, type, payload FROM events ORDER BY seq').all()).toEqual([
        { seq: 1, type: 'workflowStart', payload: WORKFLOW_START },
        { seq: 2, type: 'stepStart', payload: STEP_START },
      ]);
    } finally {
      db.close();
    }
  });
});
