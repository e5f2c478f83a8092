import { ErrorInfoSchema, ValidationError } from '../domain/errors.js';
import type { ChangeSet, Page, TraceStore } from '../domain/ports.js';
import {
  type GenerationUsage,
  SPAN_FIELD_SCHEMAS,
  type SpanRecord,
  SpanStatusSchema,
  SpanTypeSchema,
  type SpanWrite,
  type TraceFilter,
  type TraceSummary,
} from '../domain/spans.js';
import { isTerminal, type Status } from '../domain/status.js';
import type { Db } from './db.js';
import type { GroupCommitter } from './group-commit.js';
import { decodeKeyset, encodeKeyset } from './keyset.js';

/**
 * The spans table (migrations/0005): inserts and ends that run inside the workflow store's
 * `applyChanges` transaction — so spans commit with their node or not at all — and the trace
 * reads. The write side is the executor's hot path: prepared statements only, no reads, one
 * JSON.stringify per value.
 */

const SPAN_COLUMNS =
  'span_id, trace_id, workflow_id, tenant_id, node_id, parent_id, type, started_at, ended_at, status, error, fields';

interface SpanRow {
  span_id: string;
  trace_id: string;
  workflow_id: string;
  tenant_id: string;
  node_id: string | null;
  parent_id: string | null;
  type: string;
  started_at: number;
  ended_at: number | null;
  status: string | null;
  error: string | null;
  fields: string;
}

/** The root workflow of a trace, with its span count. */
interface TraceRow {
  id: string;
  trace_id: string;
  name: string;
  correlation_id: string | null;
  status: Status;
  created_at: number;
  ended_at: number | null;
  span_count: number;
}

const TRACE_COLUMNS =
  'w.id, w.trace_id, w.name, w.correlation_id, w.status, w.created_at, w.ended_at, ' +
  '(SELECT count(*) FROM spans s WHERE s.trace_id = w.trace_id) AS span_count';

/** Spans written before the `simulated` flag existed name their model only. */
const SIMULATED = "(json_extract(fields, '$.simulated') IS 1 OR json_extract(fields, '$.model') LIKE 'sim/%')";

/** Keys of a fields patch become JSON paths (`$.key`): only plain identifiers are accepted. */
const FIELD_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;

export interface SpansRepo {
  /** Writes `changes.spans` in order. An end of a span that is already closed (or absent) changes nothing. */
  apply(changes: Pick<ChangeSet, 'spans'>): void;
}

export function createSpansRepo(db: Db): SpansRepo {
  const insert = db.prepare(`INSERT INTO spans (${SPAN_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  // One statement per number of patched keys; the keys themselves are bound as JSON paths.
  const endStatements = new Map<number, ReturnType<Db['prepare']>>();

  function endStatement(keys: number): ReturnType<Db['prepare']> {
    let statement = endStatements.get(keys);
    if (statement === undefined) {
      // json_set, not json_patch: a patch replaces top-level keys as they are, so a null value is
      // stored as null (json_patch would delete the key) and an object value is not merged deeply.
      const fields = keys === 0 ? 'fields' : `json_set(fields${', ?, json(?)'.repeat(keys)})`;
      statement = db.prepare(
        `UPDATE spans SET ended_at = ?, status = ?, error = ?, fields = ${fields} WHERE trace_id = ? AND span_id = ? AND ended_at IS NULL`,
      );
      endStatements.set(keys, statement);
    }
    return statement;
  }

  function end(write: Extract<SpanWrite, { op: 'end' }>): void {
    const params: unknown[] = [
      write.endedAt,
      write.status,
      write.error == null ? null : JSON.stringify({ code: write.error.code, message: write.error.message }),
    ];
    let keys = 0;
    if (write.fields !== undefined) {
      for (const [key, value] of Object.entries(write.fields)) {
        if (value === undefined) continue;
        // An engine bug, like a patch of a missing node: fail the change set.
        if (!FIELD_KEY.test(key)) throw new Error(`span ${write.spanId}: invalid field name ${JSON.stringify(key)}`);
        params.push(`$.${key}`, JSON.stringify(value));
        keys++;
      }
    }
    params.push(write.traceId, write.spanId);
    endStatement(keys).run(params);
  }

  return {
    apply({ spans }) {
      if (!spans) return;
      for (const write of spans) {
        if (write.op === 'end') {
          end(write);
          continue;
        }
        const s = write.span;
        insert.run(
          s.spanId,
          s.traceId,
          s.workflowId,
          s.tenantId,
          s.nodeId,
          s.parentId,
          s.type,
          s.startedAt,
          s.endedAt,
          s.status,
          s.error === null ? null : JSON.stringify({ code: s.error.code, message: s.error.message }),
          JSON.stringify(s.fields),
        );
      }
    },
  };
}

/** JSON columns go back through zod: a hand-edited or corrupt row fails loudly, not downstream. */
function toSpan(row: SpanRow): SpanRecord {
  const type = SpanTypeSchema.parse(row.type);
  return {
    spanId: row.span_id,
    traceId: row.trace_id,
    workflowId: row.workflow_id,
    tenantId: row.tenant_id,
    nodeId: row.node_id,
    parentId: row.parent_id,
    type,
    startedAt: row.started_at,
    endedAt: row.ended_at,
    status: row.status === null ? null : SpanStatusSchema.parse(row.status),
    error: row.error === null ? null : ErrorInfoSchema.parse(JSON.parse(row.error)),
    fields: SPAN_FIELD_SCHEMAS[type].parse(JSON.parse(row.fields)),
  };
}

function toSummary(row: TraceRow): TraceSummary {
  const completed = isTerminal(row.status);
  return {
    traceId: row.trace_id,
    workflowId: row.id,
    workflowName: row.name,
    groupId: row.correlation_id,
    status: completed ? 'completed' : 'active',
    startedAt: row.created_at,
    endedAt: completed ? row.ended_at : null,
    spanCount: row.span_count,
  };
}

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
  const interrupt = db.prepare<[number, string]>(
    `UPDATE spans SET ended_at = max(?, started_at), status = 'interrupted' WHERE workflow_id = ? AND status IS NULL`,
  );
  const selectRoot = db.prepare<[string, string], TraceRow>(
    `SELECT ${TRACE_COLUMNS} FROM workflows w
     WHERE w.trace_id = ? AND w.tenant_id = ? AND w.parent_workflow_id IS NULL`,
  );
  const selectSpans = db.prepare<[string, string], SpanRow>(
    `SELECT ${SPAN_COLUMNS} FROM spans WHERE trace_id = ? AND tenant_id = ? ORDER BY span_id`,
  );
  // A sim/* call's cost is what it would have cost: summed apart from money (DESIGN §7).
  const selectUsage = db.prepare<[string, string], GenerationUsage>(
    `SELECT workflow_id AS workflowId,
       sum(json_extract(fields, '$.cache_hit') = 0) AS calls,
       coalesce(sum(json_extract(fields, '$.tokens_in')), 0) AS tokensIn,
       coalesce(sum(json_extract(fields, '$.tokens_out')), 0) AS tokensOut,
       coalesce(sum(CASE WHEN ${SIMULATED} THEN 0 ELSE json_extract(fields, '$.cost_usd') END), 0) AS costUsd,
       coalesce(sum(CASE WHEN ${SIMULATED} THEN json_extract(fields, '$.cost_usd') ELSE 0 END), 0) AS simulatedCostUsd
     FROM spans WHERE trace_id = ? AND tenant_id = ? AND type = 'generation_span' GROUP BY workflow_id`,
  );
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
      return committer.run(() => interrupt.run(at, workflowId).changes);
    },

    async trace(tenantId, traceId) {
      // Both reads in one synchronous turn: no commit of this process can land between them.
      const root = selectRoot.get(traceId, tenantId);
      if (root === undefined) return undefined;
      const rows = selectSpans.all(traceId, tenantId);
      const { spanCount: _, ...summary } = toSummary(root);
      return { ...summary, spans: rows.map(toSpan) };
    },

    async generationUsage(tenantId, traceId) {
      return selectUsage.all(traceId, tenantId);
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
