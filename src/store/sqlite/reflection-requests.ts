import type { ReflectionRequest } from '../../domain/reflection.js';
import { WORKFLOW_READ_COLUMNS, type WorkflowRow } from '../workflow-rows.js';
import type { Db } from './db.js';

/**
 * Reflection asked for by hand (migrations/sqlite/0025, docs/workflows.md#reflection). Reopening is one conditional
 * update run inside a write transaction: the workflow changes only while it is failed, its node is
 * failed and the node's requests are below the cap, so of two requests racing exactly one reopens
 * it, and the cap holds however requests interleave with the runs they start.
 */

interface RequestRow {
  id: string;
  workflow_id: string;
  node_id: string;
  reason: string | null;
  requested_at: number;
}

export interface ReflectionRequestRows {
  /** Reopens the failed workflow and records the request; `reopened` false when the conditions no longer held. */
  reopen(
    tenantId: string,
    request: ReflectionRequest,
    maxPerNode: number,
  ): { reopened: boolean; row: WorkflowRow | undefined };
  /** The workflow's newest request: the one a non-terminal workflow is running for, if any. */
  newest(workflowId: string): ReflectionRequest | undefined;
  /** Requests made so far, by node id. */
  counts(workflowId: string): Map<string, number>;
}

export function createReflectionRequestRows(db: Db): ReflectionRequestRows {
  const reopenWorkflow = db.prepare<[string, string, string, string, number]>(
    `UPDATE workflows SET status = 'running', output = NULL, error = NULL, ended_at = NULL
     WHERE id = ? AND tenant_id = ? AND status = 'failed' AND cancel_requested = 0
       AND EXISTS (SELECT 1 FROM nodes WHERE id = ? AND workflow_id = workflows.id AND status = 'failed')
       AND (SELECT count(*) FROM reflection_requests WHERE workflow_id = workflows.id AND node_id = ?) < ?`,
  );
  const insert = db.prepare<[string, string, string, string, string | null, number]>(
    `INSERT INTO reflection_requests (id, workflow_id, tenant_id, node_id, reason, requested_at)
     VALUES (?, ?, ?, ?, ?, ?)`,
  );
  const select = db.prepare<[string, string], WorkflowRow>(
    `SELECT ${WORKFLOW_READ_COLUMNS} FROM workflows WHERE id = ? AND tenant_id = ?`,
  );
  const selectNewest = db.prepare<[string], RequestRow>(
    `SELECT id, workflow_id, node_id, reason, requested_at FROM reflection_requests
     WHERE workflow_id = ? ORDER BY requested_at DESC, id DESC LIMIT 1`,
  );
  const selectCounts = db.prepare<[string], { node_id: string; requests: number }>(
    'SELECT node_id, count(*) AS requests FROM reflection_requests WHERE workflow_id = ? GROUP BY node_id',
  );

  return {
    reopen(tenantId, request, maxPerNode) {
      const { id, workflowId, nodeId, reason, requestedAt } = request;
      const reopened = reopenWorkflow.run(workflowId, tenantId, nodeId, nodeId, maxPerNode).changes === 1;
      if (reopened) insert.run(id, workflowId, tenantId, nodeId, reason, requestedAt);
      return { reopened, row: select.get(workflowId, tenantId) };
    },
    newest(workflowId) {
      const row = selectNewest.get(workflowId);
      return (
        row && {
          id: row.id,
          workflowId: row.workflow_id,
          nodeId: row.node_id,
          reason: row.reason,
          requestedAt: row.requested_at,
        }
      );
    },
    counts: (workflowId) => new Map(selectCounts.all(workflowId).map((row) => [row.node_id, row.requests])),
  };
}
