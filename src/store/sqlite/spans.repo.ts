import { ValidationError } from '../../domain/errors.js';
import type { Page, TraceStore } from '../../domain/ports.js';
import type { SpanRecord, SpanWrite, TraceFilter, TraceSummary } from '../../domain/spans.js';
import { decodeKeyset, encodeKeyset } from '../keyset.js';
import { type TraceRow, toSummary } from '../trace-rows.js';
import type { Db } from './db.js';
import type { GroupCommitter } from './group-commit.js';
import { createJournalRepo } from './journal.repo.js';

/**
 * Trace reads (docs/design.md#events-spans-metrics-and-rewards). Spans are written by the workflow store's commits,
 * into the journal
 * (journal.repo.ts), so they commit with their node or not at all; here they are read back as the
 * journal leaves them, and the open ones of a crashed run are closed by appending their ends.
 */

/** The inserts among the span writes of the trace's journal rows: the root's, then its descendants'. */
const SPAN_COUNT = `(SELECT count(*) FROM journal j, json_each(j.spans) s
  WHERE j.workflow_id IN (SELECT w.id UNION ALL
                          SELECT c.id FROM workflows c WHERE c.root_workflow_id = w.id AND c.parent_workflow_id IS NOT NULL)
    AND j.spans IS NOT NULL AND json_array_length(s.value) = 9)`;

const ROOT_COLUMNS = 'w.id, w.trace_id, w.name, w.correlation_id, w.status, w.created_at, w.ended_at';
const TRACE_COLUMNS = `${ROOT_COLUMNS}, ${SPAN_COUNT} AS span_count`;

type FilterKey = 'workflowId' | 'groupId' | 'active' | 'completed' | 'from' | 'to';

/** Conditions on the root workflow row `w`, in bit order; each binds at most one value. */
const LIST_FILTERS: ReadonlyArray<readonly [FilterKey, string]> = [
  // Any workflow of the trace names it: every row carries its root's id.
  ['workflowId', 'w.id = (SELECT root_workflow_id FROM workflows WHERE id = ?)'],
  ['groupId', 'w.correlation_id = ?'],
  ['active', "w.status IN ('idle', 'running')"],
  ['completed', "w.status IN ('completed', 'failed', 'cancelled')"],
  ['from', 'w.created_at >= ?'],
  ['to', 'w.created_at < ?'],
];
const CURSOR_BIT = 1 << LIST_FILTERS.length;

function filterValues(filter: TraceFilter): Partial<Record<FilterKey, string | number | true>> {
  return {
    workflowId: filter.workflowId,
    groupId: filter.groupId,
    active: filter.status === 'active' ? true : undefined,
    completed: filter.status === 'completed' ? true : undefined,
    from: filter.from,
    to: filter.to,
  };
}

export function createSqliteTraceStore(db: Db, committer: GroupCommitter): TraceStore {
  const journal = createJournalRepo(db);
  // A trace read counts its spans itself: the root's row is read without the span count.
  const selectRoot = db.prepare<[string, string], TraceRow>(
    `SELECT ${ROOT_COLUMNS}, 0 AS span_count FROM workflows w
     WHERE w.trace_id = ? AND w.tenant_id = ? AND w.parent_workflow_id IS NULL`,
  );
  // The root, then its descendants (they name it as their root, and share its trace id).
  const selectTree = db.prepare<[string, string], { id: string; traceId: string }>(
    `SELECT id, trace_id AS traceId FROM workflows WHERE id = ?
     UNION ALL
     SELECT id, trace_id AS traceId FROM workflows WHERE root_workflow_id = ? AND parent_workflow_id IS NOT NULL`,
  );
  const selectWorkflow = db.prepare<[string], { id: string; traceId: string; tenantId: string }>(
    'SELECT id, trace_id AS traceId, tenant_id AS tenantId FROM workflows WHERE id = ?',
  );
  const appendEnds = (ends: SpanWrite[]) => journal.apply({ spans: ends });

  function traceSpans(tenantId: string, traceId: string): { root: TraceRow; spans: SpanRecord[] } | undefined {
    const root = selectRoot.get(traceId, tenantId);
    if (root === undefined) return undefined;
    return { root, spans: journal.spans(selectTree.all(root.id, root.id)) };
  }
  const listStatements = new Map<number, ReturnType<Db['prepare']>>();

  function listStatement(mask: number): ReturnType<Db['prepare']> {
    let statement = listStatements.get(mask);
    if (statement === undefined) {
      const conditions = ['w.tenant_id = ?', 'w.parent_workflow_id IS NULL'];
      LIST_FILTERS.forEach(([, condition], i) => {
        if ((mask & (1 << i)) !== 0) conditions.push(condition);
      });
      if ((mask & CURSOR_BIT) !== 0) conditions.push('w.id < ?');
      statement = db.prepare(
        `SELECT ${TRACE_COLUMNS} FROM workflows w WHERE ${conditions.join(' AND ')} ORDER BY w.id DESC LIMIT ?`,
      );
      listStatements.set(mask, statement);
    }
    return statement;
  }

  return {
    async interruptOpenSpans(workflowId, at) {
      // Read and append in one transaction: no end of this process can land in between.
      return committer.run(() => {
        const workflow = selectWorkflow.get(workflowId);
        if (workflow === undefined) return 0;
        const ends: SpanWrite[] = journal
          .spans([workflow])
          .filter((span) => span.status === null)
          .map((span) => ({
            op: 'end',
            workflowId,
            tenantId: workflow.tenantId,
            spanId: span.spanId,
            endedAt: Math.max(at, span.startedAt),
            status: 'interrupted',
          }));
        appendEnds(ends);
        return ends.length;
      });
    },

    async trace(tenantId, traceId) {
      const read = traceSpans(tenantId, traceId);
      if (read === undefined) return undefined;
      const { spanCount: _, ...summary } = toSummary(read.root);
      return { ...summary, spans: read.spans };
    },

    async generationUsage(tenantId, traceId) {
      const root = selectRoot.get(traceId, tenantId);
      if (root === undefined) return [];
      return journal.usage(selectTree.all(root.id, root.id).map((w) => w.id));
    },

    async traces(tenantId, filter, cursor, limit): Promise<Page<TraceSummary>> {
      if (!Number.isInteger(limit) || limit < 1) {
        throw new ValidationError('Invalid limit', [{ path: 'limit', message: 'must be a positive integer' }]);
      }
      const values = filterValues(filter);
      let mask = 0;
      const params: unknown[] = [tenantId];
      LIST_FILTERS.forEach(([key], i) => {
        const value = values[key];
        if (value === undefined) return;
        mask |= 1 << i;
        if (value !== true) params.push(value);
      });
      if (cursor !== null) {
        mask |= CURSOR_BIT;
        params.push(...decodeKeyset(cursor, ['string']));
      }
      // One extra row tells whether another page exists without a count query.
      params.push(limit + 1);
      const rows = listStatement(mask).all(params) as TraceRow[];
      const hasMore = rows.length > limit;
      const items = (hasMore ? rows.slice(0, limit) : rows).map(toSummary);
      const last = items.at(-1);
      return { items, nextCursor: hasMore && last !== undefined ? encodeKeyset([last.workflowId]) : null };
    },
  };
}
