import { NotFoundError } from '../../domain/errors.js';
import type { WorkflowStore } from '../../domain/ports.js';
import type { WorkflowRecord } from '../../domain/records.js';

/**
 * The tenant's workflow, or 404. Tenant scoping: another tenant's workflow is answered exactly like
 * one that does not exist, so a route never tells a caller that someone else's id is real.
 */
export async function ownedWorkflow(
  store: Pick<WorkflowStore, 'get'>,
  tenantId: string,
  id: string,
): Promise<WorkflowRecord> {
  const workflow = await store.get(tenantId, id);
  if (!workflow) throw new NotFoundError(`workflow ${id}`);
  return workflow;
}
