import { createHash } from 'node:crypto';
import type pg from 'pg';
import { type ChunkHit, MAX_SCORED_ROWS } from '../../domain/corpus.js';
import { unpackChunks } from '../chunk-text.js';
import { boundedTerms } from '../query-terms.js';
import { fts5Terms } from './fts5-tokens.js';

/**
 * One BM25 search of one corpus on PostgreSQL (migrations/postgres/0010), scored exactly as FTS5's
 * bm25() scores the SQLite store's table of that corpus: IDF log((N − n + 0.5) / (n + 0.5)) floored
 * at 1e-6, k1 1.2, b 0.75, N the corpus's chunks, n a term's chunks, the chunk's length and the
 * average one in tokens, each query word a term of its own (two words of one stem count twice, as
 * two FTS5 phrases do). The terms are chosen as the SQLite store chooses them (query-terms.ts
 * boundedTerms over the same counts), the chunks holding them found through the GIN index on
 * `term_ids`, and the arithmetic done here, in FTS5's order, so equal inputs give equal scores.
 *
 * Work is bounded as in SQLite: the terms' chunk counts add up to at most MAX_SCORED_ROWS (or it is
 * the one rarest term), at most MAX_SCORED_ROWS chunks are scored, and the statement timeout of the
 * caller's transaction ends a search that still takes too long. Where the rarest term alone is in
 * more chunks than that, SQLite scores the first MAX_SCORED_ROWS by id, this the first in table
 * order: the same while the table has reused no space of purged corpora.
 *
 * A query word that unicode61 splits in several tokens (scripts whose vowel signs it does not count
 * as letters) is a phrase to FTS5; here its tokens count as separate terms, scored each.
 */

const K1 = 1.2;
const B = 0.75;
/** Longer terms are keyed by their hash (migrations/postgres/0010). */
const MAX_TERM_BYTES = 200;

/** A term as `corpus_terms.term` holds it. */
export function termKey(term: string): string {
  return Buffer.byteLength(term, 'utf8') <= MAX_TERM_BYTES
    ? term
    : `#${createHash('sha256').update(term, 'utf8').digest('hex')}`;
}

export function idf(chunks: number, withTerm: number): number {
  const value = Math.log((chunks - withTerm + 0.5) / (withTerm + 0.5));
  return value <= 0 ? 1e-6 : value;
}

export interface CorpusStats {
  seq: number;
  /** Chunks (BM25's N). */
  chunks: number;
  /** Tokens of all chunks. */
  tokens: number;
}

interface TermRow {
  term: string;
  id: number;
  chunks: number;
}

interface CandidateRow {
  id: number;
  tokens: number;
  counts: number[];
}

interface HitRow {
  id: number;
  document_id: string;
  position: number;
  text: Buffer;
  title: string | null;
}

/** The hits of `words` (query-terms.ts queryTerms, at least one) in the corpus, best first. */
export async function searchCorpus(
  client: pg.ClientBase,
  corpus: CorpusStats,
  words: readonly string[],
  k: number,
): Promise<ChunkHit[]> {
  if (corpus.chunks === 0) return [];
  const termsOf = new Map(words.map((word) => [word, [...new Set(fts5Terms(word).map(termKey))]]));
  const keys = [...new Set([...termsOf.values()].flat())];
  const { rows: found } = await client.query<TermRow>(
    'SELECT term, id, chunks FROM corpus_terms WHERE corpus_seq = $1 AND term = ANY($2::text[])',
    [corpus.seq, keys],
  );
  const byKey = new Map(found.map((row) => [row.term, row]));
  // A word's chunks: its term's, counted as SQLite counts a MATCH (up to MAX_SCORED_ROWS + 1); a
  // word of several tokens is in no more chunks than its rarest.
  const rowsWith = (word: string): number => {
    const terms = termsOf.get(word) ?? [];
    if (terms.length === 0) return 0;
    const counts = terms.map((term) => byKey.get(term)?.chunks ?? 0);
    return Math.min(MAX_SCORED_ROWS + 1, ...counts);
  };
  const chosen = boundedTerms(words, corpus.chunks, rowsWith, MAX_SCORED_ROWS);
  if (chosen.length === 0) return [];
  // One entry per chosen word's term, in query order (FTS5's phrase order, which its sum follows).
  const scored = chosen.flatMap((word) =>
    (termsOf.get(word) ?? []).flatMap((term) => {
      const row = byKey.get(term);
      return row === undefined ? [] : [{ id: row.id, idf: idf(corpus.chunks, row.chunks) }];
    }),
  );
  const ids = [...new Set(scored.map((entry) => entry.id))];
  const { rows: candidates } = await client.query<CandidateRow>(
    `SELECT c.id, c.tokens,
            ARRAY(SELECT coalesce(c.term_counts[array_position(c.term_ids, q.id)], 0)
                    FROM unnest($2::bigint[]) WITH ORDINALITY AS q(id, n) ORDER BY q.n) AS counts
       FROM corpus_chunks c
      WHERE c.corpus_seq = $1 AND c.term_ids && $2::bigint[]
      LIMIT $3`,
    [corpus.seq, ids, MAX_SCORED_ROWS],
  );
  const column = new Map(ids.map((id, i) => [id, i]));
  const avgdl = corpus.tokens / corpus.chunks;
  const ranked = candidates
    .map((candidate) => {
      const D = candidate.tokens;
      let score = 0;
      for (const entry of scored) {
        const f = candidate.counts[column.get(entry.id) as number] ?? 0;
        score += entry.idf * ((f * (K1 + 1.0)) / (f + K1 * (1 - B + (B * D) / avgdl)));
      }
      return { id: candidate.id, score };
    })
    .sort((a, b) => b.score - a.score || a.id - b.id)
    .slice(0, k);
  if (ranked.length === 0) return [];
  const { rows } = await client.query<HitRow>(
    `SELECT c.id, c.document_id, c.position, c.text, d.title
       FROM corpus_chunks c JOIN corpus_documents d ON d.id = c.document_id
      WHERE c.id = ANY($1::bigint[]) AND c.corpus_seq = $2`,
    [ranked.map((hit) => hit.id), corpus.seq],
  );
  const byId = new Map(rows.map((row) => [row.id, row]));
  const hits = ranked.flatMap(({ id, score }) => {
    const row = byId.get(id);
    return row === undefined ? [] : [{ row, score }];
  });
  const texts = unpackChunks(hits.map(({ row }) => row.text));
  return hits.map(({ row, score }, i) => ({
    chunkId: `${row.document_id}:${row.position}`,
    documentId: row.document_id,
    title: row.title,
    text: texts[i] as string,
    score,
    position: row.position,
  }));
}
