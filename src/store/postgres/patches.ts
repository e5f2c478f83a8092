import { NotFoundError } from '../../domain/errors.js';
import type { NodePatch, WorkflowPatch } from '../../domain/records.js';
import { toJson } from '../workflow-rows.js';
import type { Tx } from './analytics-writes.js';

/**
 * Workflow and node patches, all of a group commit's in one UPDATE per table: the patches travel
 * as one JSON array of rows, each with a bitmask `m` of the fields it sets, and a field left out
 * keeps its value. Several patches of one row in a batch are merged first, in order (what applying
 * them one after another does), since an UPDATE … FROM applies at most one source row per target.
 */
interface PatchField<P> {
  key: Exclude<keyof P, 'id'>;
  column: string;
  /** The column's type in the JSON row (json_to_recordset). */
  type: string;
  encode: (value: never) => unknown;
}

const asIs = (value: unknown): unknown => value;
const asFlag = (value: boolean): number => (value ? 1 : 0);

const WORKFLOW_FIELDS: ReadonlyArray<PatchField<WorkflowPatch>> = [
  { key: 'status', column: 'status', type: 'text', encode: asIs },
  { key: 'output', column: 'output', type: 'text', encode: toJson },
  { key: 'error', column: 'error', type: 'text', encode: toJson },
  { key: 'startedAt', column: 'started_at', type: 'bigint', encode: asIs },
  { key: 'endedAt', column: 'ended_at', type: 'bigint', encode: asIs },
  { key: 'cancelRequested', column: 'cancel_requested', type: 'smallint', encode: asFlag },
  { key: 'checkpoint', column: 'checkpoint', type: 'text', encode: toJson },
];

const NODE_FIELDS: ReadonlyArray<PatchField<NodePatch>> = [
  { key: 'status', column: 'status', type: 'text', encode: asIs },
  { key: 'attempts', column: 'attempts', type: 'int', encode: asIs },
  { key: 'output', column: 'output', type: 'text', encode: toJson },
  { key: 'error', column: 'error', type: 'text', encode: toJson },
  { key: 'startedAt', column: 'started_at', type: 'bigint', encode: asIs },
  { key: 'endedAt', column: 'ended_at', type: 'bigint', encode: asIs },
  { key: 'childWorkflowId', column: 'child_workflow_id', type: 'text', encode: asIs },
  { key: 'cacheKeys', column: 'cache_keys', type: 'text', encode: toJson },
];

function patcher<P extends { id: string }>(
  table: 'workflows' | 'nodes',
  fields: ReadonlyArray<PatchField<P>>,
): (tx: Tx, patches: readonly P[]) => Promise<void> {
  const assignments = fields.map(
    (f, i) => `${f.column} = CASE WHEN p.m & ${1 << i} <> 0 THEN p.${f.column} ELSE t.${f.column} END`,
  );
  const columns = ['id text', 'm int', ...fields.map((f) => `${f.column} ${f.type}`)];
  // The planner cannot see how few rows json_to_recordset holds (it assumes 100) and hash-joins a
  // scan of the whole table; `LIMIT $2` (the row count) tells it, and it looks each row up by key.
  const sql = {
    name: `baton_patch_${table}`,
    text: `UPDATE ${table} t SET ${assignments.join(', ')}
    FROM (SELECT * FROM json_to_recordset($1) AS r (${columns.join(', ')}) LIMIT $2) AS p
    WHERE t.id = p.id RETURNING t.id`,
  };
  return async (tx, patches) => {
    const rows = new Map<string, Record<string, unknown> & { m: number }>();
    for (const patch of patches) {
      let row = rows.get(patch.id);
      if (row === undefined) {
        row = { id: patch.id, m: 0 };
        rows.set(patch.id, row);
      }
      fields.forEach((field, i) => {
        const value = patch[field.key];
        if (value === undefined) return;
        (row as { m: number }).m |= 1 << i;
        (row as Record<string, unknown>)[field.column] = (field.encode as (value: unknown) => unknown)(value);
      });
    }
    // A patch that sets nothing changes nothing (and is not checked), as on SQLite.
    for (const [id, row] of rows) if (row.m === 0) rows.delete(id);
    if (rows.size === 0) return;
    const { rows: updated } = await tx.query<{ id: string }>({
      ...sql,
      values: [JSON.stringify([...rows.values()]), rows.size],
    });
    // A patch for a row that does not exist is an engine bug: fail the change set, not silently skip.
    if (updated.length !== rows.size) {
      const found = new Set(updated.map((r) => r.id));
      const missing = [...rows.keys()].find((id) => !found.has(id));
      throw new NotFoundError(`${table === 'nodes' ? 'node' : 'workflow'} ${missing}`);
    }
  };
}

export const patchWorkflows = patcher('workflows', WORKFLOW_FIELDS);
export const patchNodes = patcher('nodes', NODE_FIELDS);
