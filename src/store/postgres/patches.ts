import type { NodePatch, WorkflowPatch } from '../../domain/records.js';
import { NODE_PATCH_FIELDS, type PatchField, WORKFLOW_PATCH_FIELDS } from '../workflow-rows.js';

/**
 * Workflow and node patches, all of a group commit's as one JSON array of rows per table, which
 * baton_group_commit (migrations/postgres/0022) applies in one UPDATE each: every row carries a
 * bitmask `m` of the fields it sets — bit i is the i-th of the fields in workflow-rows.ts, the
 * order of the function's CASE columns — and a field left out keeps its value. Several patches of one row in a batch are
 * merged first, in order (what applying them one after another does), since an UPDATE … FROM
 * applies at most one source row per target.
 */
/** Patch rows for baton_group_commit: a JSON array of them and its length. */
export interface PatchRows {
  json: string;
  count: number;
}

/**
 * The rows of `patches`, merged per id in order, each starting from `defaults`; a row that sets
 * nothing is dropped, unless `extra` gives it columns of its own (a workflow's requests taken).
 */
function patchRows<P extends { id: string }>(
  fields: ReadonlyArray<PatchField<P>>,
  patches: readonly P[],
  defaults: Record<string, unknown> = {},
  extra: ReadonlyMap<string, Record<string, unknown>> = new Map(),
): PatchRows {
  const rows = new Map<string, Record<string, unknown> & { m: number }>();
  const rowOf = (id: string) => {
    let row = rows.get(id);
    if (row === undefined) {
      row = { id, m: 0, ...defaults };
      rows.set(id, row);
    }
    return row;
  };
  for (const patch of patches) {
    const row = rowOf(patch.id);
    fields.forEach((field, i) => {
      const value = patch[field.key];
      if (value === undefined) return;
      row.m |= 1 << i;
      row[field.column] = (field.encode as (value: unknown) => unknown)(value);
    });
  }
  // A patch that sets nothing changes nothing (and is not checked), as on SQLite.
  for (const [id, row] of rows) if (row.m === 0) rows.delete(id);
  for (const [id, columns] of extra) Object.assign(rowOf(id), columns);
  return { json: JSON.stringify([...rows.values()]), count: rows.size };
}

/** Workflow patch rows; `taken` adds requests taken to roots (each row gets `taken`, 0 when none). */
export function workflowPatchRows(patches: readonly WorkflowPatch[], taken: ReadonlyMap<string, number>): PatchRows {
  const extra = new Map([...taken].map(([id, count]) => [id, { taken: count }]));
  return patchRows(WORKFLOW_PATCH_FIELDS, patches, { taken: 0 }, extra);
}

export const nodePatchRows = (patches: readonly NodePatch[]): PatchRows => patchRows(NODE_PATCH_FIELDS, patches);
