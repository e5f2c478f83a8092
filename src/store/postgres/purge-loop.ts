import type pg from 'pg';
import { inTransaction } from './transaction.js';

/**
 * The purge of deleted corpora (corpus_purges, migrations/postgres/0010), one short transaction per
 * batch: up to `batch` chunks of one corpus, then its terms the same way, then its documents and
 * its purge row. An instance takes a purge row with `FOR UPDATE SKIP LOCKED`, so several instances
 * purge different corpora, never the same batch twice. A failed batch stops the loop until it is
 * kicked again (the next delete, the next start).
 */
export interface PurgeLoop {
  /** Starts the loop unless it runs or was stopped. */
  kick(): void;
  /** No further batch starts; resolves when the one running (if any) has ended. */
  stop(): Promise<void>;
}

/** One batch; true while work remains (for this instance: rows other instances hold are theirs). */
async function purgeStep(pool: pg.Pool, batch: number): Promise<boolean> {
  return inTransaction(pool, async (client) => {
    const { rows } = await client.query<{ corpus_seq: number }>(
      'SELECT corpus_seq FROM corpus_purges ORDER BY corpus_seq LIMIT 1 FOR UPDATE SKIP LOCKED',
    );
    const seq = rows[0]?.corpus_seq;
    if (seq === undefined) return false;
    const chunks = await client.query(
      `DELETE FROM corpus_chunks WHERE id IN (
         SELECT id FROM corpus_chunks WHERE corpus_seq = $1 ORDER BY id LIMIT $2)`,
      [seq, batch],
    );
    if ((chunks.rowCount ?? 0) >= batch) return true;
    const terms = await client.query(
      `DELETE FROM corpus_terms WHERE corpus_seq = $1 AND term IN (
         SELECT term FROM corpus_terms WHERE corpus_seq = $1 ORDER BY term LIMIT $2)`,
      [seq, batch * 10],
    );
    if ((terms.rowCount ?? 0) >= batch * 10) return true;
    await client.query('DELETE FROM corpus_documents WHERE corpus_seq = $1', [seq]);
    await client.query('DELETE FROM corpus_purges WHERE corpus_seq = $1', [seq]);
    return true;
  });
}

export function createPurgeLoop(pool: pg.Pool, batch: number, onError: (err: unknown) => void): PurgeLoop {
  let running: Promise<void> | undefined;
  let stopped = false;
  // Kicked while running: the loop may have just found nothing, before that delete committed.
  let kickedAgain = false;
  const loop = async (): Promise<void> => {
    try {
      do {
        kickedAgain = false;
        while (!stopped && (await purgeStep(pool, batch))) {
          await new Promise<void>((resolve) => setImmediate(resolve));
        }
      } while (kickedAgain && !stopped);
    } catch (err) {
      if (!stopped) onError(err);
    } finally {
      running = undefined;
    }
  };
  return {
    kick() {
      if (stopped) return;
      if (running !== undefined) kickedAgain = true;
      else running = loop();
    },
    async stop() {
      stopped = true;
      await running;
    },
  };
}
