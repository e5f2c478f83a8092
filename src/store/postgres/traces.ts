import type pg from 'pg';
import { ValidationError } from '../../domain/errors.js';
import type { Page, TraceStore } from '../../domain/ports.js';
import type { GenerationUsage, SpanWrite, TraceFilter, TraceSummary } from '../../domain/spans.js';
import { draftJournalRows } from '../journal-codec.js';
import { decodeKeyset, encodeKeyset } from '../keyset.js';
import { type TraceRow, toSummary } from '../trace-rows.js';
import type { Tx } from './analytics-writes.js';
import type { PostgresCommitter } from './group-commit.js';
import { appendSpanWrites, journalSpans } from './journal.js';
import { prepared } from './prepared.js';

/**
 * Trace reads on PostgreSQL, as on SQLite (src/store/sqlite/spans.repo.ts): spans are read back as
 * the journal leaves them, and the open ones of a crashed run are closed by appending their ends.
 */
/** The inserts (9-element writes) among the span writes of the trace's journal rows. */
const SPAN_COUNT = `(SELECT count(*) FROM journal j, json_array_elements(j.spans::json) s
  WHERE j.workflow_id IN (SELECT w.id UNION ALL
                          SELECT c.id FROM workflows c WHERE c.root_workflow_id = w.id AND c.parent_workflow_id IS NOT NULL)
    AND j.spans IS NOT NULL AND json_array_length(s.value) = 9)`;

const ROOT_COLUMNS = 'w.id, w.trace_id, w.name, w.correlation_id, w.status, w.created_at, w.ended_at';

/**
 * The roots of trace `$1` (one), by workflows_root_by_trace alone. `OFFSET 0` keeps the tenant's
 * condition outside: with both in one scan, a planner without statistics yet (a young database)
 * took the tenant's index and filtered every one of the tenant's workflows by trace.
 */
const ROOTS_OF_TRACE = `SELECT w.* FROM workflows w WHERE w.trace_id = $1 AND w.parent_workflow_id IS NULL OFFSET 0`;

async function selectRoot(tx: Tx, tenantId: string, traceId: string): Promise<TraceRow | undefined> {
  const { rows } = await tx.query<TraceRow>(
    `SELECT ${ROOT_COLUMNS}, 0 AS span_count FROM (${ROOTS_OF_TRACE}) w WHERE w.tenant_id = $2`,
    [traceId, tenantId],
  );
  return rows[0];
}

/** The root, then its descendants (they name it as their root, and share its trace id). */
async function selectTree(tx: Tx, rootId: string): Promise<Array<{ id: string; traceId: string }>> {
  const { rows } = await tx.query<{ id: string; traceId: string }>(
    `SELECT id, trace_id AS "traceId" FROM workflows WHERE id = $1
     UNION ALL
     SELECT id, trace_id AS "traceId" FROM workflows WHERE root_workflow_id = $1 AND parent_workflow_id IS NOT NULL`,
    [rootId],
  );
  return rows;
}

export function createPostgresTraceStore(pool: pg.Pool, committer: PostgresCommitter): TraceStore {
  return {
    async interruptOpenSpans(workflowId, at) {
      // Read and append in one transaction of the committer: no commit of this instance lands in between.
      return committer.transaction(async (tx) => {
        const { rows } = await tx.query<{ id: string; traceId: string; tenantId: string }>(
          'SELECT id, trace_id AS "traceId", tenant_id AS "tenantId" FROM workflows WHERE id = $1 FOR UPDATE',
          [workflowId],
        );
        const workflow = rows[0];
        if (workflow === undefined) return 0;
        const ends: SpanWrite[] = (await journalSpans(tx, [workflow]))
          .filter((span) => span.status === null)
          .map((span) => ({
            op: 'end',
            workflowId,
            tenantId: workflow.tenantId,
            spanId: span.spanId,
            endedAt: Math.max(at, span.startedAt),
            status: 'interrupted',
          }));
        await appendSpanWrites(tx, draftJournalRows({ spans: ends }));
        return ends.length;
      });
    },

    async trace(tenantId, traceId) {
      const root = await selectRoot(pool, tenantId, traceId);
      if (root === undefined) return undefined;
      const spans = await journalSpans(pool, await selectTree(pool, root.id));
      const { spanCount: _, ...summary } = toSummary(root);
      return { ...summary, spans };
    },

    async generationUsage(tenantId, traceId) {
      // One statement (every GET of a workflow asks): the trace's root, its tree, and each one's
      // sums by key lookups (LATERAL: a join would let the planner scan the whole journal); the
      // root first, then its descendants in id (creation) order.
      const { rows } = await pool.query<GenerationUsage>(
        prepared(
          `WITH root AS (
           SELECT id FROM (${ROOTS_OF_TRACE}) r WHERE r.tenant_id = $2
         ), tree AS (
           SELECT id, 0 AS ord FROM root
           UNION ALL
           SELECT w.id, 1 FROM workflows w, root WHERE w.root_workflow_id = root.id AND w.parent_workflow_id IS NOT NULL
         )
         SELECT t.id AS "workflowId", u.calls, u."tokensIn", u."tokensOut", u."costUsd", u."simulatedCostUsd"
           FROM tree t, LATERAL (
             SELECT count(*) AS n, sum(j.calls) AS calls, sum(j.tokens_in) AS "tokensIn",
                    sum(j.tokens_out) AS "tokensOut", sum(j.cost_usd) AS "costUsd",
                    sum(j.simulated_cost_usd) AS "simulatedCostUsd"
               FROM journal j WHERE j.workflow_id = t.id
           ) u
          WHERE u.n > 0 ORDER BY t.ord, t.id`,
          [traceId, tenantId],
        ),
      );
      return rows;
    },

    async traces(tenantId, filter: TraceFilter, cursor, limit): Promise<Page<TraceSummary>> {
      if (!Number.isInteger(limit) || limit < 1) {
        throw new ValidationError('Invalid limit', [{ path: 'limit', message: 'must be a positive integer' }]);
      }
      const params: unknown[] = [tenantId];
      const conditions = ['w.tenant_id = $1', 'w.parent_workflow_id IS NULL'];
      const bind = (value: unknown): string => {
        params.push(value);
        return `$${params.length}`;
      };
      // Any workflow of the trace names it: every row carries its root's id.
      if (filter.workflowId !== undefined) {
        conditions.push(`w.id = (SELECT root_workflow_id FROM workflows WHERE id = ${bind(filter.workflowId)})`);
      }
      if (filter.groupId !== undefined) conditions.push(`w.correlation_id = ${bind(filter.groupId)}`);
      if (filter.status === 'active') conditions.push("w.status IN ('idle', 'running')");
      if (filter.status === 'completed') conditions.push("w.status IN ('completed', 'failed', 'cancelled')");
      if (filter.from !== undefined) conditions.push(`w.created_at >= ${bind(filter.from)}`);
      if (filter.to !== undefined) conditions.push(`w.created_at < ${bind(filter.to)}`);
      if (cursor !== null) conditions.push(`w.id < ${bind(decodeKeyset(cursor, ['string'])[0])}`);
      // One extra row tells whether another page exists without a count query.
      const { rows } = await pool.query<TraceRow>(
        `SELECT ${ROOT_COLUMNS}, ${SPAN_COUNT} AS span_count FROM workflows w
          WHERE ${conditions.join(' AND ')} ORDER BY w.id DESC LIMIT ${bind(limit + 1)}`,
        params,
      );
      const hasMore = rows.length > limit;
      const items = (hasMore ? rows.slice(0, limit) : rows).map(toSummary);
      const last = items.at(-1);
      return { items, nextCursor: hasMore && last !== undefined ? encodeKeyset([last.workflowId]) : null };
    },
  };
}
