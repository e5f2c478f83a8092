import type { TraceSummary } from '../domain/spans.js';
import { isTerminal, type Status } from '../domain/status.js';

/** A trace's root row as both stores read it, and the summary made of it. */

/** The root workflow of a trace, with its span count. */
export interface TraceRow {
  id: string;
  trace_id: string;
  name: string;
  correlation_id: string | null;
  status: Status;
  created_at: number;
  ended_at: number | null;
  span_count: number;
}

export function toSummary(row: TraceRow): TraceSummary {
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
