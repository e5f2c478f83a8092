import { ErrorInfoSchema, NotFoundError } from '../../domain/errors.js';
import type { ChangeSet } from '../../domain/ports.js';
import { type ReflectionEntry, ReflectionLevelSchema, ReflectionResolutionSchema } from '../../domain/reflection.js';
import type { Db } from './db.js';

/**
 * The reflections table (migrations/sqlite/0003): inserts and outcome updates that run inside the
 * workflow store's `applyChanges` transaction — so an entry commits with its node's result or not
 * at all — and the history read. Synchronous, like every write inside a group commit.
 */

const COLUMNS =
  'id, workflow_id, tenant_id, node_id, node_name, attempt, timestamp, level, reason, error, resolution, success';

interface ReflectionRow {
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

export interface ReflectionsRepo {
  /** Writes `changes.reflections` then `changes.reflectionOutcomes`; throws (rolling back the whole
   * change set) when an outcome names an entry that does not exist. */
  apply(changes: Pick<ChangeSet, 'reflections' | 'reflectionOutcomes'>): void;
  /** A workflow's entries, oldest first. */
  list(workflowId: string): ReflectionEntry[];
}

function toFlag(success: boolean | null): number | null {
  return success === null ? null : success ? 1 : 0;
}

/** JSON columns go back through zod: a hand-edited or corrupt row fails loudly, not downstream. */
function toEntry(row: ReflectionRow): ReflectionEntry {
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

export function createReflectionsRepo(db: Db): ReflectionsRepo {
  const insert = db.prepare(`INSERT INTO reflections (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const updateSuccess = db.prepare<[number, string]>('UPDATE reflections SET success = ? WHERE id = ?');
  const selectByWorkflow = db.prepare<[string], ReflectionRow>(
    `SELECT ${COLUMNS} FROM reflections WHERE workflow_id = ? ORDER BY id`,
  );

  return {
    apply({ reflections, reflectionOutcomes }) {
      if (reflections) {
        for (const r of reflections) {
          insert.run(
            r.id,
            r.workflowId,
            r.tenantId,
            r.nodeId,
            r.nodeName,
            r.attempt,
            r.timestamp,
            r.level,
            r.reason,
            JSON.stringify({ code: r.error.code, message: r.error.message }),
            JSON.stringify(r.resolution),
            toFlag(r.success),
          );
        }
      }
      if (reflectionOutcomes) {
        for (const outcome of reflectionOutcomes) {
          // Like a node patch: an outcome for a missing entry is an engine bug, so fail the change set.
          if (updateSuccess.run(outcome.success ? 1 : 0, outcome.id).changes === 0) {
            throw new NotFoundError(`reflection ${outcome.id}`);
          }
        }
      }
    },

    list(workflowId) {
      return selectByWorkflow.all(workflowId).map(toEntry);
    },
  };
}
