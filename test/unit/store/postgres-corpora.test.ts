import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createPostgresCorpusStore, type PostgresCorpusStore } from '../../../src/store/postgres/corpora.js';
import { migratePostgres } from '../../../src/store/postgres/migrate.js';
import { openPostgresPool } from '../../../src/store/postgres/pool.js';
import { freshPostgresDatabase } from '../../support/postgres-database.js';

/**
 * What is the PostgreSQL corpus store's own (store/postgres/corpora.ts, corpus-search.ts,
 * migrations/postgres/0010), on a real server; what every adapter promises is
 * test/contracts/corpus-store.contract.test.ts. Its BM25 statistics are kept and purged with the
 * chunks; a search finds candidates through the term index, never by walking a corpus; a long term
 * is keyed by its hash; a search past its statement timeout answers SERVICE_UNAVAILABLE.
 */
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

let pool: pg.Pool;
let store: PostgresCorpusStore;
beforeAll(async () => {
  const db = await freshPostgresDatabase();
  pool = openPostgresPool({ connectionString: db.url, max: 4 });
  // The database is dropped WITH (FORCE) at the end: a connection still closing may hear of it.
  pool.on('error', () => {});
  cleanups.push(db.drop, () => pool.end());
  await migratePostgres(pool);
  store = createPostgresCorpusStore(pool, { now: () => 1_700_000_000_000, onError: () => {}, searchTimeoutMs: 300 });
  cleanups.push(() => store.stop());
});

const count = async (sql: string, values: unknown[] = []) =>
  (await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${sql}`, values)).rows[0]?.n ?? 0;

describe('PostgresCorpusStore', () => {
  it("keeps each term's chunk count and the corpus's tokens, and purges them with the corpus only", async () => {
    const keep = await store.create('t', { name: 'keep' });
    await store.addDocuments('t', keep.id, [{ text: 'walrus walrus seal' }, { text: 'seal' }]);
    const terms = await pool.query<{ term: string; chunks: number }>(
      'SELECT t.term, t.chunks FROM corpus_terms t JOIN corpora c ON c.seq = t.corpus_seq WHERE c.id = $1 ORDER BY term',
      [keep.id],
    );
    expect(terms.rows).toEqual([
      { term: 'seal', chunks: 2 },
      { term: 'walru', chunks: 1 },
    ]);
    expect((await pool.query('SELECT tokens FROM corpora WHERE id = $1', [keep.id])).rows[0]).toEqual({ tokens: 4 });

    const gone = await store.create('t', { name: 'gone' });
    await store.addDocuments(
      't',
      gone.id,
      Array.from({ length: 300 }, (_, i) => ({ text: `walrus term${i} `.repeat(60) })),
    );
    const seq = (await pool.query<{ seq: number }>('SELECT seq FROM corpora WHERE id = $1', [gone.id])).rows[0]?.seq;
    expect(await count('corpus_terms WHERE corpus_seq = $1', [seq])).toBe(301);
    await store.delete('t', gone.id);
    await vi.waitFor(async () => expect(await count('corpus_purges')).toBe(0), { timeout: 20_000 });
    expect(await count('corpus_terms WHERE corpus_seq = $1', [seq])).toBe(0);
    expect(await count('corpus_chunks WHERE corpus_seq = $1', [seq])).toBe(0);
    expect(await count('corpus_terms')).toBe(2);
    expect((await store.search('t', keep.id, 'walrus', 5)).map((h) => h.text)).toEqual(['walrus walrus seal']);
  });

  it('finds candidates through the term index, never by walking the corpus', async () => {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SET LOCAL enable_seqscan = off');
      const { rows } = await client.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN SELECT c.id FROM corpus_chunks c WHERE c.term_ids && $1::bigint[] LIMIT 2000`,
        [[1, 2]],
      );
      const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
      expect(plan).toContain('corpus_chunks_by_term');
      expect(plan).not.toContain('corpus_chunks_by_corpus');
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });

  it('keys a term longer than a B-tree entry allows by its hash, and finds it', async () => {
    const corpus = await store.create('t', { name: 'long' });
    const word = 'q'.repeat(700);
    await store.addDocuments('t', corpus.id, [{ text: `${word} short` }]);
    const { rows } = await pool.query<{ term: string }>(
      "SELECT term FROM corpus_terms t JOIN corpora c ON c.seq = t.corpus_seq WHERE c.id = $1 AND term LIKE '#%'",
      [corpus.id],
    );
    expect(rows).toEqual([{ term: expect.stringMatching(/^#[0-9a-f]{64}$/) }]);
    expect(await store.search('t', corpus.id, word, 5)).toHaveLength(1);
  });

  it('answers SERVICE_UNAVAILABLE when a search outlasts its statement timeout', async () => {
    const corpus = await store.create('t', { name: 'slow' });
    await store.addDocuments('t', corpus.id, [{ text: 'slow words' }]);
    const blocker = await pool.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE corpus_terms IN ACCESS EXCLUSIVE MODE');
      await expect(store.search('t', corpus.id, 'slow', 5)).rejects.toMatchObject({
        code: 'SERVICE_UNAVAILABLE',
        retryAfterMs: expect.any(Number),
      });
    } finally {
      await blocker.query('ROLLBACK');
      blocker.release();
    }
    expect(await store.search('t', corpus.id, 'slow', 5)).toHaveLength(1);
  });
});
