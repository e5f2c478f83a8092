import type { ChangeSet } from '../../domain/ports.js';
import type { Db } from './db.js';

/**
 * Writes of tool calls and retrieval runs (migrations/sqlite/0010), inside the workflow store's commit of
 * the node they belong to. Reads are the analytics queries (analytics.repo.ts).
 */
export interface ToolAnalyticsRows {
  apply(changes: Pick<ChangeSet, 'toolCalls' | 'retrievalRuns'>): void;
}

export function createToolAnalyticsRows(db: Db): ToolAnalyticsRows {
  const insertCall = db.prepare(
    `INSERT INTO tool_calls (tenant_id, workflow_id, node_id, tool, agent, model, success, latency_ms, result_bytes, at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const insertRun = db.prepare(
    `INSERT INTO retrieval_runs (tenant_id, workflow_id, node_id, node_name, task_type, agent, model, corpus_id, mode,
       retrieval_calls, steps, loop_exhausted, halt_reason, guard, guard_min_calls, guard_interventions, relevant, at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  return {
    apply({ toolCalls, retrievalRuns }) {
      if (toolCalls) {
        for (const c of toolCalls) {
          insertCall.run(
            c.tenantId,
            c.workflowId,
            c.nodeId,
            c.tool,
            c.agent,
            c.model,
            c.success ? 1 : 0,
            Math.round(c.latencyMs),
            c.resultBytes,
            c.at,
          );
        }
      }
      if (retrievalRuns) {
        for (const r of retrievalRuns) {
          insertRun.run(
            r.tenantId,
            r.workflowId,
            r.nodeId,
            r.nodeName,
            r.taskType,
            r.agent,
            r.model,
            r.corpusId,
            r.mode,
            r.retrievalCalls,
            r.steps,
            r.loopExhausted ? 1 : 0,
            r.haltReason,
            r.guard,
            r.guardMinCalls,
            r.guardInterventions,
            r.relevant === null ? null : r.relevant ? 1 : 0,
            r.at,
          );
        }
      }
    },
  };
}
