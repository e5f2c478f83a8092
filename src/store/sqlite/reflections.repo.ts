import { NotFoundError } from '../../domain/errors.js';
import type { ChangeSet } from '../../domain/ports.js';
import type { ReflectionEntry } from '../../domain/reflection.js';
import { REFLECTION_COLUMNS as COLUMNS, type ReflectionRow, toReflectionEntry } from '../reflection-rows.js';
import type { Db } from './db.js';

/**
 * The reflections table (migrations/sqlite/0003): inserts and outcome updates that run inside the
 * workflow store's `applyChanges` transaction — so an entry commits with its node's result or not
 * at all — and the history read. Synchronous, like every write inside a group commit.
 */

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
      return selectByWorkflow.all(workflowId).map(toReflectionEntry);
    },
  };
}
