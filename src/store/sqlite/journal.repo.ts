import type { WorkflowEvent } from '../../domain/events.js';
import type { ChangeSet } from '../../domain/ports.js';
import type { GenerationUsage, SpanRecord } from '../../domain/spans.js';
import {
  checkAppendPoint,
  draftJournalRows,
  finishSpans,
  foldEvents,
  foldSpans,
  type JournalRow,
} from '../journal-codec.js';
import type { Db } from './db.js';

/**
 * The journal (migrations/sqlite/0008): the durable record of a workflow's events and spans. A commit
 * appends ONE row per workflow it touches, holding that commit's events and span writes as JSON
 * arrays. Rows are rowid-ordered, so every commit of every workflow lands on the last page of one
 * B-tree — instead of ~12 statements spread over the events, spans and index B-trees of as many
 * workflows as are in flight, which is what a commit used to dirty (docs/design.md#storage, bench/write-pattern).
 *
 * Reads fold a workflow's rows in `seq` order (the row format: src/store/journal-codec.ts). The `events` and `spans` views (same migration) show the same fold to SQL, for people and
 * tests; the service itself never queries them.
 */

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
  const selectKnown = db.prepare<[string], number>('SELECT 1 FROM workflows WHERE id = ?').pluck();
  const selectRequestsSent = db
    .prepare<[string], number | null>(
      `SELECT sum(e.value ->> '$[4].requests') FROM journal j, json_each(j.events) e
       WHERE j.workflow_id = ? AND j.events IS NOT NULL AND e.value ->> '$[3]' = 'agentPromptEnd'`,
    )
    .pluck();
  return {
    apply(changes) {
      for (const d of draftJournalRows(changes)) {
        if (d.lastEvent !== null) {
          const point = selectAppendPoint.get(d.workflowId, d.workflowId);
          checkAppendPoint(d, point?.known === 1, point?.last ?? null);
        } else checkAppendPoint(d, selectKnown.get(d.workflowId) === 1, null);
        const u = d.usage;
        insert.run(
          d.workflowId,
          d.tenantId,
          d.lastEvent,
          d.events,
          d.spans,
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
        if (foldEvents(row, after, limit, out)) break;
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
        for (const row of selectSpanRows.iterate(id)) foldSpans(row, traceId, byId);
      }
      return finishSpans(byId);
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
