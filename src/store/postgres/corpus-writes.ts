import type pg from 'pg';
import type { PreparedDocument } from '../corpus-rows.js';
import { termKey } from './corpus-search.js';
import { termCounts } from './fts5-tokens.js';

/**
 * The writes of one addDocuments call on PostgreSQL (corpora.ts, migrations/postgres/0010): each
 * chunk's terms read as FTS5 reads them, then, inside the caller's transaction, the terms' chunk
 * counts upserted and the documents and chunks inserted, many rows per statement (`unnest`).
 */

/** Rows per statement: bounds a statement's parameters (a call may add 90 000 chunks). */
const INSERT_BATCH = 2_000;

interface IndexedChunk {
  tokens: number;
  /** Term keys and their counts, position for position. */
  terms: string[];
  counts: number[];
}

/** Every chunk's terms (fts5-tokens.ts), and per term the number of the new chunks holding it. */
export function indexDocuments(prepared: readonly PreparedDocument[]): {
  chunks: IndexedChunk[][];
  chunksWith: Map<string, number>;
  tokens: number;
} {
  const chunksWith = new Map<string, number>();
  let tokens = 0;
  const chunks = prepared.map((document) =>
    document.chunks.map((text) => {
      const counted = termCounts(text);
      const byKey = new Map<string, number>();
      for (const [term, n] of counted.counts) {
        const key = termKey(term);
        byKey.set(key, (byKey.get(key) ?? 0) + n);
      }
      for (const key of byKey.keys()) chunksWith.set(key, (chunksWith.get(key) ?? 0) + 1);
      tokens += counted.tokens;
      return { tokens: counted.tokens, terms: [...byKey.keys()], counts: [...byKey.values()] };
    }),
  );
  return { chunks, chunksWith, tokens };
}

/** Adds the new chunks to each term's count, in term order (concurrent writers lock alike); the ids by term. */
export async function upsertTerms(
  client: pg.ClientBase,
  seq: number,
  chunksWith: ReadonlyMap<string, number>,
): Promise<Map<string, number>> {
  const ids = new Map<string, number>();
  const terms = [...chunksWith.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  for (let i = 0; i < terms.length; i += INSERT_BATCH) {
    const slice = terms.slice(i, i + INSERT_BATCH);
    const { rows } = await client.query<{ term: string; id: number }>(
      `INSERT INTO corpus_terms (corpus_seq, term, chunks)
       SELECT $1, u.term, u.chunks FROM unnest($2::text[], $3::int[]) WITH ORDINALITY AS u(term, chunks, n) ORDER BY u.n
       ON CONFLICT (corpus_seq, term) DO UPDATE SET chunks = corpus_terms.chunks + excluded.chunks
       RETURNING term, id`,
      [seq, slice, slice.map((term) => chunksWith.get(term) ?? 0)],
    );
    for (const row of rows) ids.set(row.term, row.id);
  }
  return ids;
}

export async function insertDocuments(
  client: pg.ClientBase,
  seq: number,
  prepared: readonly PreparedDocument[],
  createdAt: number,
): Promise<void> {
  for (let i = 0; i < prepared.length; i += INSERT_BATCH) {
    const slice = prepared.slice(i, i + INSERT_BATCH);
    await client.query(
      `INSERT INTO corpus_documents (id, corpus_seq, title, metadata, bytes, chunk_count, created_at)
       SELECT u.id, $1, u.title, u.metadata, u.bytes, u.chunk_count, $2
         FROM unnest($3::text[], $4::text[], $5::text[], $6::int[], $7::int[]) AS u(id, title, metadata, bytes, chunk_count)`,
      [
        seq,
        createdAt,
        slice.map((d) => d.id),
        slice.map((d) => d.title),
        slice.map((d) => d.metadata),
        slice.map((d) => d.size),
        slice.map((d) => d.chunks.length),
      ],
    );
  }
}

/** The chunks, in document and position order (their ids follow it, as SQLite's rowids do). */
export async function insertChunks(
  client: pg.ClientBase,
  seq: number,
  prepared: readonly PreparedDocument[],
  indexed: readonly IndexedChunk[][],
  termIds: ReadonlyMap<string, number>,
): Promise<void> {
  const rows = prepared.flatMap((document, d) =>
    document.packed.map((text, position) => {
      const chunk = indexed[d]?.[position] as IndexedChunk;
      return { document: document.id, position, text, chunk };
    }),
  );
  for (let i = 0; i < rows.length; i += INSERT_BATCH) {
    const slice = rows.slice(i, i + INSERT_BATCH);
    // Each chunk's arrays as array literals (numbers only), cast per row: unnest flattens arrays of arrays.
    await client.query(
      `INSERT INTO corpus_chunks (corpus_seq, document_id, position, text, tokens, term_ids, term_counts)
       SELECT $1, u.document_id, u.position, u.text, u.tokens, u.term_ids::bigint[], u.term_counts::int[]
         FROM unnest($2::text[], $3::int[], $4::bytea[], $5::int[], $6::text[], $7::text[])
              WITH ORDINALITY AS u(document_id, position, text, tokens, term_ids, term_counts, n)
        ORDER BY u.n`,
      [
        seq,
        slice.map((r) => r.document),
        slice.map((r) => r.position),
        slice.map((r) => r.text),
        slice.map((r) => r.chunk.tokens),
        slice.map((r) => `{${r.chunk.terms.map((term) => termIds.get(term) as number).join(',')}}`),
        slice.map((r) => `{${r.chunk.counts.join(',')}}`),
      ],
    );
  }
}
