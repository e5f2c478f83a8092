import { describe, expect, it } from 'vitest';
import { newSpanId } from '../../../src/domain/ids.js';
import type { SpanRecord } from '../../../src/domain/spans.js';
import { createPostgresTraceStore } from '../../../src/store/postgres/traces.js';
import { createPostgresWorkflowStore } from '../../../src/store/postgres/workflows.js';
import { fixtureEvent } from '../../support/events.js';
import { emptyPostgresStore } from '../../support/postgres-store.js';
import { newWorkflow } from '../../support/store-fixtures.js';

/**
 * The `events` and `spans` views of the PostgreSQL journal (migrations/postgres/0004), which
 * people and the process suites query: they show what the store's own fold shows.
 */
describe('PostgreSQL journal views', () => {
  it('show each event once and each span as its writes leave it', async () => {
    const { pool, committer } = await emptyPostgresStore();
    const store = createPostgresWorkflowStore(pool, committer);
    const traces = createPostgresTraceStore(pool, committer);
    const created = newWorkflow({ tenantId: 'acme' });
    const { workflow } = created;
    await store.create(created);
    const span = (type: 'agent_span' | 'function_span'): SpanRecord =>
      ({
        spanId: newSpanId(),
        traceId: workflow.traceId,
        workflowId: workflow.id,
        tenantId: 'acme',
        nodeId: created.nodes[1]?.id ?? null,
        parentId: null,
        type,
        startedAt: 10,
        endedAt: null,
        status: null,
        error: null,
        fields:
          type === 'agent_span'
            ? { agent_name: 'writer' }
            : { function_name: 'search', arguments: {}, result: null, success: true },
      }) as SpanRecord;
    const agent = span('agent_span');
    const tool = span('function_span');
    const event = (seq: number) =>
      fixtureEvent({ workflowId: workflow.id, tenantId: 'acme', seq, nodeId: null, at: seq }, 'stepStart', {
        node: 'draft',
        type: 'prompt',
        attempt: 1,
      });
    await store.commit({
      events: [event(1), event(2)],
      spans: [
        { op: 'insert', span: agent },
        { op: 'insert', span: tool },
      ],
    });
    const end = (spanId: string, endedAt: number, status: 'ok' | 'error') =>
      ({ op: 'end', workflowId: workflow.id, tenantId: 'acme', spanId, endedAt, status }) as const;
    await store.commit({ events: [event(3)], spans: [end(agent.spanId, 50, 'ok')] });
    // A second end changes nothing.
    await store.commit({ spans: [end(agent.spanId, 90, 'error')] });

    const { rows: events } = await pool.query('SELECT seq, type FROM events WHERE workflow_id = $1 ORDER BY seq', [
      workflow.id,
    ]);
    expect(events).toEqual([1, 2, 3].map((seq) => ({ seq, type: 'stepStart' })));
    const { rows: spans } = await pool.query(
      'SELECT span_id, type, started_at, ended_at, status FROM spans WHERE workflow_id = $1 ORDER BY span_id',
      [workflow.id],
    );
    const folded = (await traces.trace('acme', workflow.traceId))?.spans ?? [];
    expect(spans).toEqual(
      folded.map((s) => ({
        span_id: s.spanId,
        type: s.type,
        started_at: s.startedAt,
        ended_at: s.endedAt,
        status: s.status,
      })),
    );
    expect(spans.map((s) => s.status).sort()).toEqual(['ok', null].sort());
    await committer.drain();
  });
});
