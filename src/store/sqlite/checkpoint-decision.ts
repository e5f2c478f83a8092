import type { Checkpoint } from '../../domain/records.js';
import { WORKFLOW_READ_COLUMNS, type WorkflowRow } from '../workflow-rows.js';
import type { Db } from './db.js';

/**
 * The conditional update that settles a human checkpoint (docs/workflows.md#complexity-routing-and-human-checkpoints): it changes the row only while the workflow is idle, not cancelled and still
 * pending, so of two decisions racing (or a decision racing a cancel) exactly one takes effect.
 * Run inside a write transaction: answers whether this call decided, and the row as that
 * transaction leaves it (the winner's answer shows its own decision, not a later write).
 */
export function createCheckpointDecider(
  db: Db,
): (tenantId: string, id: string, decision: Checkpoint) => { decided: boolean; row: WorkflowRow | undefined } {
  const decide = db.prepare<[string, string, string]>(
    `UPDATE workflows SET checkpoint = ?
     WHERE id = ? AND tenant_id = ? AND status = 'idle' AND cancel_requested = 0
       AND json_extract(checkpoint, '$.state') = 'pending'`,
  );
  const select = db.prepare<[string, string], WorkflowRow>(
    `SELECT ${WORKFLOW_READ_COLUMNS} FROM workflows WHERE id = ? AND tenant_id = ?`,
  );
  return (tenantId, id, decision) => ({
    decided: decide.run(JSON.stringify(decision), id, tenantId).changes === 1,
    row: select.get(id, tenantId),
  });
}
