import { z } from 'zod';
import { ErrorInfoSchema, NotFoundError } from '../domain/errors.js';
import { EventBodySchema, payloadJson, type WorkflowEvent } from '../domain/events.js';
import type { ChangeSet } from '../domain/ports.js';
import {
  type GenerationUsage,
  SPAN_FIELD_SCHEMAS,
  type SpanRecord,
  SpanStatusSchema,
  SpanTypeSchema,
  type SpanWrite,
} from '../domain/spans.js';

/**
 * The journal's row format, shared by both stores (src/store/sqlite/journal.repo.ts,
 * src/store/postgres/journal.ts): a commit appends ONE row per workflow it touches, holding that
 * commit's events and span writes as JSON arrays; reads fold a workflow's rows in `seq` order
 * (events concatenated, spans inserted then closed). Driver-free: the stores only run the SQL.
 *
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

/** A journal row as both stores read it back. */
export interface JournalRow {
  workflow_id: string;
  tenant_id: string;
  events: string | null;
  spans: string | null;
}

/** One journal row to append: a workflow's part of a change set, already serialised. */
export interface JournalDraft {
  workflowId: string;
  tenantId: string;
  firstEvent: number | null;
  lastEvent: number | null;
  /** JSON array text, or null when the commit gave the workflow no events. */
  events: string | null;
  spans: string | null;
  usage: GenerationUsage | undefined;
}

interface OpenDraft {
  tenantId: string;
  firstEvent: number | null;
  lastEvent: number | null;
  events: string[];
  spans: string[];
  usage?: GenerationUsage;
}

/**
 * The journal rows a change set appends, one per workflow it gives events or span writes to
 * (nearly always one: a change set is one run's commit). Events out of order within the set, and
 * usage without a span write of its workflow, are engine bugs and throw.
 */
export function draftJournalRows({
  events,
  spans,
  usage,
}: Pick<ChangeSet, 'events' | 'spans' | 'usage'>): JournalDraft[] {
  if (!events?.length && !spans?.length) return [];
  const drafts = new Map<string, OpenDraft>();
  const draftFor = (workflowId: string, tenantId: string): OpenDraft => {
    let draft = drafts.get(workflowId);
    if (draft === undefined) {
      draft = { tenantId, firstEvent: null, lastEvent: null, events: [], spans: [] };
      drafts.set(workflowId, draft);
    }
    return draft;
  };
  if (events) {
    for (const e of events) {
      const draft = draftFor(e.workflowId, e.tenantId);
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
    for (const write of spans) draftFor(writeWorkflow(write), writeTenant(write)).spans.push(encodeSpan(write));
  }
  // Usage rides on its workflow's row: it only changes with a span write of that workflow.
  if (usage) {
    for (const u of usage) {
      const draft = drafts.get(u.workflowId);
      if (draft === undefined) throw new Error(`workflow ${u.workflowId}: usage without a span write`);
      draft.usage = u;
    }
  }
  return [...drafts].map(([workflowId, d]) => ({
    workflowId,
    tenantId: d.tenantId,
    firstEvent: d.firstEvent,
    lastEvent: d.lastEvent,
    events: d.events.length === 0 ? null : `[${d.events.join(',')}]`,
    spans: d.spans.length === 0 ? null : `[${d.spans.join(',')}]`,
    usage: d.usage,
  }));
}

/** Events of an unknown workflow, or not after the ones stored, fail the change set (engine bugs). */
export function checkAppendPoint(draft: JournalDraft, known: boolean, last: number | null): void {
  if (!known) throw new NotFoundError(`workflow ${draft.workflowId}`);
  if (last !== null && (draft.firstEvent ?? 0) <= last) {
    throw new Error(`workflow ${draft.workflowId}: event seq ${draft.firstEvent} is not after the stored ${last}`);
  }
}

/**
 * Appends to `out` the events of journal rows (in seq order) with `seq > after`, until `out`
 * holds `limit`; returns whether it is full.
 */
export function foldEvents(row: JournalRow, after: number, limit: number, out: WorkflowEvent[]): boolean {
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
    if (out.length >= limit) return true;
  }
  return false;
}

/** Folds one journal row's span writes (rows in seq order) into `byId`. */
export function foldSpans(row: JournalRow, traceId: string, byId: Map<string, SpanRecord>): void {
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

/** The folded spans in id (creation) order, each one's fields through its type's schema once. */
export function finishSpans(byId: Map<string, SpanRecord>): SpanRecord[] {
  const spans = [...byId.values()].sort((a, b) => (a.spanId < b.spanId ? -1 : a.spanId > b.spanId ? 1 : 0));
  for (const span of spans) span.fields = SPAN_FIELD_SCHEMAS[span.type].parse(span.fields) as SpanRecord['fields'];
  return spans;
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
