import { packChunk } from '../chunk-text.js';
import type { Db } from './db.js';

/** Legacy rows rewritten per commit: a few tens of milliseconds of work. */
const LEGACY_BATCH = 1_000;

/**
 * Compresses up to LEGACY_BATCH chunk rows still holding TEXT (written before migrations/sqlite/0023);
 * true while more remain. Idempotent: a row once a BLOB leaves the partial index the batch reads.
 */
export function compressLegacyChunks(db: Db): boolean {
  // Repeats the partial index's WHERE clause verbatim (migrations/sqlite/0023) so the planner uses it.
  const rows = db
    .prepare<[number], { id: number; text: string }>(
      "SELECT id, text FROM corpus_chunks WHERE typeof(text) = 'text' ORDER BY id LIMIT ?",
    )
    .all(LEGACY_BATCH);
  const update = db.prepare<[Buffer, number]>('UPDATE corpus_chunks SET text = ? WHERE id = ?');
  for (const row of rows) update.run(packChunk(row.text), row.id);
  return rows.length === LEGACY_BATCH;
}
