import { z } from 'zod';
import { ErrorInfoSchema, NotFoundError } from '../../domain/errors.js';
import { EventBodySchema, payloadJson, type WorkflowEvent } from '../../domain/events.js';
import type { ChangeSet } from '../../domain/ports.js';
import {
  type GenerationUsage,
  SPAN_FIELD_SCHEMAS,
  type SpanRecord,
  SpanStatusSchema,
  SpanTypeSchema,
  type SpanWrite,
} from '../../domain/spans.js';
import type { Db } from './db.js';

/**
 * The journal (migrations/sqlite/0008): the durable record of a workflow's events and spans. A commit
 * appends ONE row per workflow it touches, holding that commit's events and span writes as JSON
 * arrays. Rows are rowid-ordered, so every commit of every workflow lands on the last page of one
 * B-tree — instead of ~12 statements spread over the events, spans and index B-trees of as many
 * workflows as are in flight, which is what a commit used to dirty (docs/design.md#storage, bench/write-pattern).
 *
 * Reads fold a workflow's rows in `seq` order: events are concatenated, spans are inserted then
 * closed. The `events` and `spans` views (same migration) show the same fold to SQL, for people and
 * tests; the service itself never queries them.
 */

interface JournalRow {
  workflow_id: string;
  tenant_id: string;
  events: string | null;
  spans: string | null;
}

/**
 * Journal entries are positional arrays, not objects: a step writes several of them, and keys
 * would be a third of the bytes. The zod tuples below are the one description of each position.
 *   event:       [seq, nodeId, at, type, payload]
 *   span insert: [spanId, nodeId, parentId, type, startedAt, endedAt, status, error, fields]
 *   span end:    [spanId, endedAt, status, error, fields]   (fields may be null: nothing replaced)
 */
const StoredEventSchema = z.tuple([z.number().int(), z.string().nullable(), z.number(), z.string(), z.unknown()]);

const StoredErrorSchema = ErrorInfoSchema.nullable();
const StoredFieldsSchema = z.record(z.string(), z.unknown());
const StoredSpanSchema = z.union([
  z.tuple([
    z.string(),
    z.string().nullable(),
    z.string().nullable(),
    SpanTypeSchema,
    z.number(),
    z.number().nullable(),
    SpanStatusSchema.nullable(),
    StoredErrorSchema,
    StoredFieldsSchema,
  ]),
  z.tuple([z.string(), z.number(), SpanStatusSchema, StoredErrorSchema, StoredFieldsSchema.nullable()]),
]);

const StoredEventsSchema = z.array(StoredEventSchema);
const StoredSpansSchema = z.array(StoredSpanSchema);

/** One journal row's worth: a workflow's part of a change set, already serialised. */
interface RowDraft {
  tenantId: string;
  firstEvent: number | null;
  lastEvent: number | null;
  events: string[];
  spans: string[];
  usage?: GenerationUsage;
}

/** last_event grows with seq: the newest row that has events holds the workflow's last seq. */
const LAST_EVENT =
  'SELECT last_event FROM journal WHERE workflow_id = ? AND last_event IS NOT NULL ORDER BY seq DESC LIMIT 1';

export interface JournalRepo {
  /** Appends one row per workflow that `changes` gives events or span writes to. */
  apply(changes: Pick<ChangeSet, 'events' | 'spans' | 'usage'>): void;
  /** Events with `seq > after`, in order, at most `limit`. */
  events(workflowId: string, after: number, limit: number): WorkflowEvent[];
  lastSeq(workflowId: string): number;
  /** Σ `agentPromptEnd.requests`: provider requests the workflow's finished model calls sent. */
  requestsSent(workflowId: string): number;
  /** Every span of these workflows as its writes leave it, in id (creation) order. */
  spans(workflows: ReadonlyArray<{ id: string; traceId: string }>): SpanRecord[];
  /** What each workflow's generation spans add up to, from the rows' usage columns (no span is read). */
  usage(workflowIds: readonly string[]): GenerationUsage[];
}

export function createJournalRepo(db: Db): JournalRepo {
  const insert = db.prepare(
    `INSERT INTO journal (workflow_id, tenant_id, last_event, events, spans, calls, tokens_in, tokens_out, cost_usd, simulated_cost_usd)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const selectUsage = db.prepare<[string], GenerationUsage>(
    `SELECT workflow_id AS workflowId, sum(calls) AS calls, sum(tokens_in) AS tokensIn, sum(tokens_out) AS tokensOut,
       sum(cost_usd) AS costUsd, sum(simulated_cost_usd) AS simulatedCostUsd
     FROM journal WHERE workflow_id = ?`,
  );
  const selectEventRows = db.prepare<[string, number], JournalRow>(
    `SELECT workflow_id, tenant_id, events, NULL AS spans FROM journal
     WHERE workflow_id = ? AND last_event > ? ORDER BY seq`,
  );
  const selectSpanRows = db.prepare<[string], JournalRow>(
    `SELECT workflow_id, tenant_id, NULL AS events, spans FROM journal
     WHERE workflow_id = ? AND spans IS NOT NULL ORDER BY seq`,
  );
  const selectLastSeq = db.prepare<[string], number | null>(LAST_EVENT).pluck();
  // What a foreign key and a (workflow_id, seq) primary key used to guarantee, in one statement of
  // two index seeks on pages the commit is about to write anyway.
  const selectAppendPoint = db.prepare<[string, string], { known: number | null; last: number | null }>(
    `SELECT (SELECT 1 FROM workflows WHERE id = ?) AS known,
            (${LAST_EVENT}) AS last`,
  );
  const selectRequestsSent = db
    .prepare<[string], number | null>(
      `SELECT sum(e.value ->> '$[4].requests') FROM journal j, json_each(j.events) e
       WHERE j.workflow_id = ? AND j.events IS NOT NULL AND e.value ->> '$[3]' = 'agentPromptEnd'`,
    )
    .pluck();
  /** Events of an unknown workflow, or not after the ones stored, fail the change set (engine bugs). */
  function checkAppend(workflowId: string, draft: RowDraft): void {
    const point = selectAppendPoint.get(workflowId, workflowId);
    if (point?.known !== 1) throw new NotFoundError(`workflow ${workflowId}`);
    if (point.last !== null && (draft.firstEvent ?? 0) <= point.last) {
      throw new Error(`workflow ${workflowId}: event seq ${draft.firstEvent} is not after the stored ${point.last}`);
    }
  }

  function draftFor(drafts: Map<string, RowDraft>, workflowId: string, tenantId: string): RowDraft {
    let draft = drafts.get(workflowId);
    if (draft === undefined) {
      draft = { tenantId, firstEvent: null, lastEvent: null, events: [], spans: [] };
      drafts.set(workflowId, draft);
    }
    return draft;
  }

  return {
    apply({ events, spans, usage }) {
      if (!events?.length && !spans?.length) return;
      // Nearly always one workflow: a change set is one run's commit.
      const drafts = new Map<string, RowDraft>();
      if (events) {
        for (const e of events) {
          const draft = draftFor(drafts, e.workflowId, e.tenantId);
          // A run numbers its events 1, 2, 3…: out of order within a commit is an engine bug.
          if (draft.lastEvent !== null && e.seq <= draft.lastEvent) {
            throw new Error(`workflow ${e.workflowId}: event seq ${e.seq} after ${draft.lastEvent}`);
          }
          draft.firstEvent ??= e.seq;
          draft.events.push(
            `[${e.seq},${e.nodeId === null ? 'null' : JSON.stringify(e.nodeId)},${e.at},${JSON.stringify(e.type)},${payloadJson(e)}]`,
          );
          draft.lastEvent = e.seq;
        }
      }
      if (spans) {
        for (const write of spans) {
          draftFor(drafts, writeWorkflow(write), writeTenant(write)).spans.push(encodeSpan(write));
        }
      }
      // Usage rides on its workflow's row: it only changes with a span write of that workflow.
      if (usage) {
        for (const u of usage) {
          const draft = drafts.get(u.workflowId);
          if (draft === undefined) throw new Error(`workflow ${u.workflowId}: usage without a span write`);
          draft.usage = u;
        }
      }
      for (const [workflowId, d] of drafts) {
        if (d.lastEvent !== null) checkAppend(workflowId, d);
        const u = d.usage;
        insert.run(
          workflowId,
          d.tenantId,
          d.lastEvent,
          d.events.length === 0 ? null : `[${d.events.join(',')}]`,
          d.spans.length === 0 ? null : `[${d.spans.join(',')}]`,
          u?.calls ?? 0,
          u?.tokensIn ?? 0,
          u?.tokensOut ?? 0,
          u?.costUsd ?? 0,
          u?.simulatedCostUsd ?? 0,
        );
      }
    },

    events(workflowId, after, limit) {
      const out: WorkflowEvent[] = [];
      for (const row of selectEventRows.iterate(workflowId, after)) {
        for (const [seq, nodeId, at, type, payload] of StoredEventsSchema.parse(JSON.parse(row.events as string))) {
          if (seq <= after) continue;
          out.push({
            workflowId: row.workflow_id,
            tenantId: row.tenant_id,
            seq,
            nodeId,
            at,
            ...EventBodySchema.parse({ type, payload }),
          });
          if (out.length >= limit) return out;
        }
      }
      return out;
    },

    lastSeq(workflowId) {
      return selectLastSeq.get(workflowId) ?? 0;
    },

    requestsSent(workflowId) {
      return selectRequestsSent.get(workflowId) ?? 0;
    },

    spans(workflows) {
      const byId = new Map<string, SpanRecord>();
      for (const { id, traceId } of workflows) {
        for (const row of selectSpanRows.iterate(id)) {
          for (const stored of StoredSpansSchema.parse(JSON.parse(row.spans as string))) {
            if (stored.length === 5) {
              const [spanId, endedAt, status, error, fields] = stored;
              const span = byId.get(spanId);
              // An end only closes an open span: a second end (or one of an unknown span) changes nothing.
              if (span === undefined || span.status !== null) continue;
              span.endedAt = endedAt;
              span.status = status;
              span.error = error;
              if (fields) span.fields = { ...span.fields, ...fields } as SpanRecord['fields'];
              continue;
            }
            const [spanId, nodeId, parentId, type, startedAt, endedAt, status, error, fields] = stored;
            byId.set(spanId, {
              spanId,
              traceId,
              workflowId: row.workflow_id,
              tenantId: row.tenant_id,
              nodeId,
              parentId,
              type,
              startedAt,
              endedAt,
              status,
              error,
              fields: fields as SpanRecord['fields'],
            });
          }
        }
      }
      const spans = [...byId.values()].sort((a, b) => (a.spanId < b.spanId ? -1 : a.spanId > b.spanId ? 1 : 0));
      // Fields go through their type's schema once, after the ends merged into them.
      for (const span of spans) span.fields = SPAN_FIELD_SCHEMAS[span.type].parse(span.fields) as SpanRecord['fields'];
      return spans;
    },

    usage(workflowIds) {
      const out: GenerationUsage[] = [];
      for (const id of workflowIds) {
        const row = selectUsage.get(id);
        if (row?.workflowId != null) out.push(row);
      }
      return out;
    },
  };
}

function writeWorkflow(write: SpanWrite): string {
  return write.op === 'insert' ? write.span.workflowId : write.workflowId;
}

function writeTenant(write: SpanWrite): string {
  return write.op === 'insert' ? write.span.tenantId : write.tenantId;
}

/** The error column keeps `{code, message}` only, as it always has. */
function storedError(
  error: { code: string; message: string } | null | undefined,
): { code: string; message: string } | null {
  return error == null ? null : { code: error.code, message: error.message };
}

function encodeSpan(write: SpanWrite): string {
  if (write.op === 'insert') {
    const s = write.span;
    // A span is open (no end, no status) or closed (both): anything else is an engine bug.
    if ((s.endedAt === null) !== (s.status === null)) {
      throw new Error(`span ${s.spanId}: endedAt ${s.endedAt} with status ${s.status}`);
    }
    return JSON.stringify([
      s.spanId,
      s.nodeId,
      s.parentId,
      s.type,
      s.startedAt,
      s.endedAt,
      s.status,
      storedError(s.error),
      s.fields,
    ]);
  }
  return JSON.stringify([write.spanId, write.endedAt, write.status, storedError(write.error), write.fields ?? null]);
}
