import type { WorkflowEvent } from '../../domain/events.js';
import type { SpanRecord } from '../../domain/spans.js';
import {
  checkAppendPoint,
  finishSpans,
  foldEvents,
  foldSpans,
  type JournalDraft,
  type JournalRow,
} from '../journal-codec.js';
import type { Tx } from './analytics-writes.js';
import { prepared } from './prepared.js';

/**
 * The journal on PostgreSQL (migrations/postgres/0003): the same rows as the SQLite journal — one
 * per workflow per commit, events and span writes as JSON arrays (src/store/journal-codec.ts) — so
 * a commit of many steps is one INSERT, and reads fold a workflow's rows in `seq` order.
 */

/**
 * The drafts as the JSON rows json_to_recordset reads into the journal's columns. Events and span
 * writes are JSON text already: they go in as JSON, not as JSON strings, so neither side escapes
 * and unescapes them again (json_to_recordset hands a text column a nested array's text verbatim).
 */
function journalRows(drafts: readonly JournalDraft[]): string {
  const rows = drafts.map((d) => {
    const scalars = JSON.stringify({
      workflow_id: d.workflowId,
      tenant_id: d.tenantId,
      last_event: d.lastEvent,
      calls: d.usage?.calls ?? 0,
      tokens_in: d.usage?.tokensIn ?? 0,
      tokens_out: d.usage?.tokensOut ?? 0,
      cost_usd: d.usage?.costUsd ?? 0,
      simulated_cost_usd: d.usage?.simulatedCostUsd ?? 0,
    });
    return `${scalars.slice(0, -1)},"events":${d.events ?? 'null'},"spans":${d.spans ?? 'null'}}`;
  });
  return `[${rows.join(',')}]`;
}

/** The journal's part of a baton_group_commit call (migrations/postgres/0022). */
export interface JournalArguments {
  /** The rows, or null when there are none. */
  rows: string | null;
  /**
   * Each workflow the drafts name, with the first seq of the events they give it (null for span
   * writes alone): the function's append check, which also makes sure each exists (the journal has
   * no foreign key, migrations/postgres/0025).
   */
  appendIds: string[];
  firstEvents: Array<number | null>;
}

/**
 * The drafts (in order) as a baton_group_commit call takes them, after checking that the events of
 * one workflow's drafts follow each other; the function checks the first against the stored ones.
 */
export function journalArguments(drafts: readonly JournalDraft[]): JournalArguments {
  const last = new Map<string, number>();
  const appendIds: string[] = [];
  const firstEvents: Array<number | null> = [];
  /** Workflows given span writes alone so far: checked for existence once. */
  const spansOnly = new Set<string>();
  for (const d of drafts) {
    if (d.lastEvent === null) {
      if (!spansOnly.has(d.workflowId) && !last.has(d.workflowId)) {
        spansOnly.add(d.workflowId);
        appendIds.push(d.workflowId);
        firstEvents.push(null);
      }
      continue;
    }
    const before = last.get(d.workflowId);
    if (before === undefined) {
      appendIds.push(d.workflowId);
      firstEvents.push(d.firstEvent ?? 0);
    } else checkAppendPoint(d, true, before);
    last.set(d.workflowId, d.lastEvent);
  }
  return { rows: drafts.length === 0 ? null : journalRows(drafts), appendIds, firstEvents };
}

/**
 * Appends span writes outside a group commit: the span ends a run taken over gets for what its
 * dead execution left open (traces.ts). They carry no events, so there is no append point to check.
 */
export async function appendSpanWrites(tx: Tx, drafts: readonly JournalDraft[]): Promise<void> {
  if (drafts.length === 0) return;
  if (drafts.some((d) => d.lastEvent !== null)) throw new Error('events go through the group commit');
  await tx.query(
    `INSERT INTO journal (workflow_id, tenant_id, last_event, events, spans, calls, tokens_in, tokens_out, cost_usd,
       simulated_cost_usd)
     SELECT * FROM json_to_recordset($1) AS j (workflow_id text, tenant_id text, last_event bigint, events text,
       spans text, calls int, tokens_in bigint, tokens_out bigint, cost_usd float8, simulated_cost_usd float8)`,
    [journalRows(drafts)],
  );
}

/** Events with `seq > after`, in order, at most `limit`. */
export async function journalEvents(
  tx: Tx,
  workflowId: string,
  after: number,
  limit: number,
): Promise<WorkflowEvent[]> {
  const out: WorkflowEvent[] = [];
  // Rows are read a page at a time: a row holds a commit's events, so `limit` rows always suffice.
  const { rows } = await tx.query<JournalRow>(
    prepared(
      `SELECT workflow_id, tenant_id, events, NULL AS spans FROM journal
        WHERE workflow_id = $1 AND last_event > $2 ORDER BY seq LIMIT $3`,
      [workflowId, after, limit],
    ),
  );
  for (const row of rows) if (foldEvents(row, after, limit, out)) break;
  return out;
}

export async function journalLastSeq(tx: Tx, workflowId: string): Promise<number> {
  const { rows } = await tx.query<{ last: number | null }>(
    prepared('SELECT max(last_event) AS last FROM journal WHERE workflow_id = $1', [workflowId]),
  );
  return rows[0]?.last ?? 0;
}

/** Σ `agentPromptEnd.requests`: provider requests the workflow's finished model calls sent. */
export async function journalRequestsSent(tx: Tx, workflowId: string): Promise<number> {
  const { rows } = await tx.query<{ sent: number | null }>(
    `SELECT sum((e.value -> 4 ->> 'requests')::bigint) AS sent
       FROM journal j, json_array_elements(j.events::json) e
      WHERE j.workflow_id = $1 AND j.events IS NOT NULL AND e.value ->> 3 = 'agentPromptEnd'`,
    [workflowId],
  );
  return rows[0]?.sent ?? 0;
}

/** Every span of these workflows as its writes leave it, in id (creation) order. */
export async function journalSpans(
  tx: Tx,
  workflows: ReadonlyArray<{ id: string; traceId: string }>,
): Promise<SpanRecord[]> {
  if (workflows.length === 0) return [];
  const traceOf = new Map(workflows.map((w) => [w.id, w.traceId]));
  const { rows } = await tx.query<JournalRow>(
    prepared(
      `SELECT workflow_id, tenant_id, NULL AS events, spans FROM journal
        WHERE workflow_id = ANY($1::text[]) AND spans IS NOT NULL ORDER BY seq`,
      [[...traceOf.keys()]],
    ),
  );
  const byId = new Map<string, SpanRecord>();
  for (const row of rows) foldSpans(row, traceOf.get(row.workflow_id) as string, byId);
  return finishSpans(byId);
}
