import { unpackChunks } from '../chunk-text.js';
import type { Db } from './db.js';

/**
 * One FTS5 table per corpus (migrations/sqlite/0015), `corpus_fts_<seq>`. Why one table each, not one
 * shared index with BM25 recomputed from per-corpus statistics: FTS5's bm25() takes its row count,
 * average row length and document frequencies from the table it ranks, and SQL gets no term
 * frequencies out of an FTS5 index to compute BM25 with other statistics. A table per corpus makes
 * every statistic that corpus's own, keeps ranking inside FTS5 (fast, exact BM25), and lets a search
 * touch only the postings of the corpus it searches. The cost: a few schema rows per corpus (bounded by
 * MAX_CORPORA_PER_TENANT per tenant) and a schema change at each corpus create and purge.
 *
 * Contentless (the text is in corpus_chunks, compressed, not stored twice) with contentless_delete=1 (SQLite ≥
 * 3.43), so a chunk leaves the index by rowid without its text being tokenized again; the rowid is
 * corpus_chunks.id. porter + unicode61: English stemming ("runs" finds "running") over
 * Unicode-aware, case- and diacritic-folding word splitting.
 */

/** The table name of a corpus's index; `seq` is an integer key, never user text. */
export function corpusIndexTable(seq: number): string {
  if (!Number.isSafeInteger(seq) || seq < 1) throw new Error(`not a corpus seq: ${seq}`);
  return `corpus_fts_${seq}`;
}

export function createCorpusIndex(db: Db, seq: number): void {
  db.exec(
    `CREATE VIRTUAL TABLE ${corpusIndexTable(seq)} USING fts5(text, content = '', contentless_delete = 1, tokenize = 'porter unicode61')`,
  );
}

/** Drops the (emptied) index of a purged corpus; nothing when it has none. */
export function dropCorpusIndex(db: Db, seq: number): void {
  db.exec(`DROP TABLE IF EXISTS ${corpusIndexTable(seq)}`);
}

export function hasCorpusIndex(db: Db, seq: number): boolean {
  return (
    db
      .prepare<[string], number>("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?")
      .pluck()
      .get(corpusIndexTable(seq)) === 1
  );
}

/**
 * Builds the index of each corpus that has none (the first start after migrations/sqlite/0015: the shared
 * index of 0011 is gone, the text is in corpus_chunks), one transaction per corpus. The text is
 * read row by row in JS: a row holds it compressed or, written before migrations/sqlite/0023, as TEXT
 * (chunk-text.ts). Runs before the service listens; returns how many corpora it indexed.
 */
export function buildMissingCorpusIndexes(db: Db): number {
  const seqs = db.prepare<[], number>('SELECT seq FROM corpora ORDER BY seq').pluck().all();
  // Keyset batches: a connection runs no other statement while one iterates.
  const chunks = db.prepare<[number, number], { id: number; text: string | Buffer }>(
    'SELECT id, text FROM corpus_chunks WHERE corpus_seq = ? AND id > ? ORDER BY id LIMIT 1000',
  );
  let built = 0;
  const build = db.transaction((seq: number) => {
    createCorpusIndex(db, seq);
    const insert = db.prepare<[number, string]>(`INSERT INTO ${corpusIndexTable(seq)} (rowid, text) VALUES (?, ?)`);
    for (let batch = chunks.all(seq, 0); batch.length > 0; batch = chunks.all(seq, batch.at(-1)?.id ?? 0)) {
      const texts = unpackChunks(batch.map((chunk) => chunk.text));
      for (const [i, chunk] of batch.entries()) insert.run(chunk.id, texts[i] as string);
    }
  });
  for (const seq of seqs) {
    if (hasCorpusIndex(db, seq)) continue;
    build(seq);
    built++;
  }
  return built;
}
