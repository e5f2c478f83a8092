import { ErrorInfoSchema } from '../domain/errors.js';
import { type ReflectionEntry, ReflectionLevelSchema, ReflectionResolutionSchema } from '../domain/reflection.js';

/** The reflections table's rows (both stores) and their mapping to entries. */

export const REFLECTION_COLUMNS =
  'id, workflow_id, tenant_id, node_id, node_name, attempt, timestamp, level, reason, error, resolution, success';

export interface ReflectionRow {
  id: string;
  workflow_id: string;
  tenant_id: string;
  node_id: string;
  node_name: string;
  attempt: number;
  timestamp: number;
  level: string;
  reason: string;
  error: string;
  resolution: string;
  success: number | null;
}

/** JSON columns go back through zod: a hand-edited or corrupt row fails loudly, not downstream. */
export function toReflectionEntry(row: ReflectionRow): ReflectionEntry {
  return {
    id: row.id,
    workflowId: row.workflow_id,
    tenantId: row.tenant_id,
    nodeId: row.node_id,
    nodeName: row.node_name,
    attempt: row.attempt,
    timestamp: row.timestamp,
    level: ReflectionLevelSchema.parse(row.level),
    reason: row.reason,
    error: ErrorInfoSchema.parse(JSON.parse(row.error)),
    resolution: ReflectionResolutionSchema.parse(JSON.parse(row.resolution)),
    success: row.success === null ? null : row.success === 1,
  };
}
