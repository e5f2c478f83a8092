import { type ChunkHit, MAX_SCORED_ROWS } from '../../domain/corpus.js';
import { unpackChunks } from '../chunk-text.js';
import { boundedTerms } from '../query-terms.js';
import { corpusIndexTable } from './corpus-index.js';
import type { Db } from './db.js';

/**
 * One BM25 search of one corpus's index (store/sqlite/corpus-index.ts), on whatever connection it is given:
 * the search worker's read-only one for a database file, the service's own for `:memory:`
 * (search-runner.ts). Only that corpus's table is read, so every statistic is the corpus's own.
 */

export interface SearchRequest {
  tenantId: string;
  corpusSeq: number;
  /** Distinct query words (query-terms.ts queryTerms), at least one. */
  terms: string[];
  k: number;
}

interface HitRow {
  document_id: string;
  position: number;
  /** Compressed (chunk-text.ts), or TEXT in a row written before migrations/sqlite/0023. */
  text: string | Buffer;
  title: string | null;
}

interface CorpusStatements {
  rowsWith: (term: string) => number;
  scan: (match: string, limit: number) => Array<{ chunk: number; rank: number }>;
}

/**
 * The terms as one MATCH expression that cannot be a syntax error or an operator: each a quoted
 * string (query-terms.ts leaves no `"` in a term), OR-ed.
 */
export function anyOf(terms: readonly string[]): string {
  return terms.map((term) => `"${term}"`).join(' OR ');
}

/** Prepared statements kept for this many corpora (a connection's cache, not a limit on corpora). */
const CACHED_CORPORA = 64;

/** Is this the error of a statement whose table was dropped (the corpus purged) meanwhile? */
function isMissingTable(err: unknown): boolean {
  return err instanceof Error && /no such table/i.test(err.message);
}

/** Returns the search function; `undefined` from it means the tenant has no such corpus (any more). */
export function createCorpusSearcher(db: Db): (request: SearchRequest) => ChunkHit[] | undefined {
  const corpusRows = db
    .prepare<[number, string], number>('SELECT chunk_count FROM corpora WHERE seq = ? AND tenant_id = ?')
    .pluck();
  const chunkById = db.prepare<[number, number], HitRow>(
    `SELECT c.document_id, c.position, c.text, d.title
     FROM corpus_chunks c JOIN corpus_documents d ON d.id = c.document_id
     WHERE c.id = ? AND c.corpus_seq = ?`,
  );
  const cache = new Map<number, CorpusStatements>();
  const statements = (seq: number): CorpusStatements => {
    const cached = cache.get(seq);
    if (cached !== undefined) {
      cache.delete(seq);
      cache.set(seq, cached);
      return cached;
    }
    const table = corpusIndexTable(seq);
    // The rows of a one-term MATCH (stemmed as the index stems it), counted up to a cap: a term in
    // more rows than a search scores costs no more to count than one in exactly that many.
    const count = db
      .prepare<[string, number], number>(`SELECT count(*) FROM (SELECT 1 FROM ${table} WHERE ${table} MATCH ? LIMIT ?)`)
      .pluck();
    const scan = db.prepare<[string, number], { chunk: number; rank: number }>(
      `SELECT rowid AS chunk, rank FROM ${table} WHERE ${table} MATCH ? LIMIT ?`,
    );
    const made: CorpusStatements = {
      rowsWith: (term) => count.get(anyOf([term]), MAX_SCORED_ROWS + 1) ?? 0,
      scan: (match, limit) => scan.all(match, limit),
    };
    cache.set(seq, made);
    const oldest = cache.keys().next().value;
    if (cache.size > CACHED_CORPORA && oldest !== undefined) cache.delete(oldest);
    return made;
  };

  return (request) => {
    const { corpusSeq, tenantId, terms, k } = request;
    const indexedRows = corpusRows.get(corpusSeq, tenantId);
    if (indexedRows === undefined) return undefined;
    try {
      const corpus = statements(corpusSeq);
      // FTS5's bm25() reads the whole row list of every term it is given (for the term's IDF) before
      // it scores a row, so the work of a search is the rows of its terms: the terms are chosen so
      // that those add up to at most MAX_SCORED_ROWS (or are the one rarest term).
      const chosen = boundedTerms(terms, indexedRows, corpus.rowsWith, MAX_SCORED_ROWS);
      if (chosen.length === 0) return [];
      // At most MAX_SCORED_ROWS rows are scored (in index order when more match), then the k best
      // kept; ties in rowid order, so a search answers the same every time.
      const ranked = corpus
        .scan(anyOf(chosen), MAX_SCORED_ROWS)
        .sort((a, b) => a.rank - b.rank || a.chunk - b.chunk)
        .slice(0, k);
      const rows: Array<{ row: HitRow; rank: number }> = [];
      for (const { chunk, rank } of ranked) {
        const row = chunkById.get(chunk, corpusSeq);
        if (row) rows.push({ row, rank });
      }
      const texts = unpackChunks(rows.map(({ row }) => row.text));
      const hits: ChunkHit[] = rows.map(({ row, rank }, i) => ({
        chunkId: `${row.document_id}:${row.position}`,
        documentId: row.document_id,
        title: row.title,
        text: texts[i] as string,
        score: -rank,
        position: row.position,
      }));
      return hits;
    } catch (err) {
      if (isMissingTable(err)) {
        cache.delete(corpusSeq);
        return undefined;
      }
      throw err;
    }
  };
}
