import { ValidationError } from '../domain/errors.js';

/**
 * Keyset paging cursors, the one helper of every paged list: the sort key of the last row of a
 * page, as opaque base64url JSON (`[created_at, workflow_id]` for metrics, `[id]` for workflows and
 * traces, whose time-ordered ids sort them alone). A page query continues strictly after it
 * (`(created_at, id) < (?, ?)` or `id < ?` for newest first), so paging stays stable while rows
 * are added and costs an index seek, not an OFFSET scan.
 */
export type KeysetPart = 'number' | 'string';

export function encodeKeyset(values: ReadonlyArray<string | number>): string {
  return Buffer.from(JSON.stringify(values), 'utf8').toString('base64url');
}

/** The values of a cursor of the given shape; a 400 naming `cursor` for anything else. */
export function decodeKeyset(cursor: string, shape: readonly KeysetPart[]): Array<string | number> {
  let values: unknown;
  try {
    values = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    values = undefined;
  }
  const fits =
    Array.isArray(values) &&
    values.length === shape.length &&
    values.every((v, i) =>
      shape[i] === 'number' ? Number.isSafeInteger(v) : typeof v === 'string' && v.length <= 200,
    ) &&
    encodeKeyset(values as Array<string | number>) === cursor;
  if (!fits)
    throw new ValidationError('Malformed cursor', [{ path: 'cursor', message: 'not a cursor returned by this API' }]);
  return values as Array<string | number>;
}
