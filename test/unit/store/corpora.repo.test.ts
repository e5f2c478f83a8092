import { afterEach, describe, expect, it, vi } from 'vitest';
import { MAX_QUERY_TERMS } from '../../../src/domain/corpus.js';
import { queryTerms, weightedTerms } from '../../../src/store/query-terms.js';
import { createSqliteCorpusStore, type SqliteCorpusStore } from '../../../src/store/sqlite/corpora.repo.js';
import { corpusIndexTable } from '../../../src/store/sqlite/corpus-index.js';
import { anyOf } from '../../../src/store/sqlite/corpus-search.js';
import { type Db, openDatabase } from '../../../src/store/sqlite/db.js';
import { createGroupCommitter } from '../../../src/store/sqlite/group-commit.js';

/**
 * The SQLite corpus store over a real in-memory database (migrations/sqlite/0011): what is its own —
 * the MATCH expression, FTS5's scores and its per-corpus index tables. What every adapter promises is
 * test/contracts/corpus-store.contract.test.ts.
 */

const opened: Array<{ db: Db; store: SqliteCorpusStore }> = [];
function open(): { db: Db; store: SqliteCorpusStore } {
  const db = openDatabase(':memory:', { synchronous: 'NORMAL' });
  const store = createSqliteCorpusStore(db, createGroupCommitter(db), {
    now: () => 1_700_000_000_000,
    onError: (err) => {
      throw err;
    },
  });
  opened.push({ db, store });
  return { db, store };
}
afterEach(() => {
  for (const { db, store } of opened.splice(0)) {
    store.stop();
    db.close();
  }
});

const count = (db: Db, sql: string): number => db.prepare(sql).pluck().get() as number;
const seqOf = (db: Db, id: string): number =>
  db.prepare<[string], number>('SELECT seq FROM corpora WHERE id = ?').pluck().get(id) as number;

/** The MATCH expression of a query, as the store builds it before weighing the terms. */
const matchOf = (query: string): string | undefined => {
  const terms = queryTerms(query);
  return terms.length === 0 ? undefined : anyOf(terms);
};

describe('query terms', () => {
  it('quotes each word and ORs them; operators and syntax are plain words or gone', () => {
    expect(matchOf('deploy the Main branch')).toBe('"deploy" OR "the" OR "main" OR "branch"');
    expect(matchOf('a AND b OR NOT c')).toBe('"a" OR "and" OR "b" OR "or" OR "not" OR "c"');
    expect(matchOf('NEAR(x y) col:x "quoted* ^start')).toBe('"near" OR "x" OR "y" OR "col" OR "quoted" OR "start"');
    expect(matchOf('café naïve 東京')).toBe('"café" OR "naïve" OR "東京"');
  });

  it('has nothing to match for a query without a word', () => {
    expect(matchOf('')).toBeUndefined();
    expect(matchOf('" * : ( ) ^ - + {}')).toBeUndefined();
  });

  it('keeps at most MAX_QUERY_TERMS distinct words', () => {
    const query = Array.from({ length: 200 }, (_, i) => `w${i}`).join(' ');
    expect(matchOf(query)?.split(' OR ')).toHaveLength(MAX_QUERY_TERMS);
    expect(matchOf('x x X x')).toBe('"x"');
  });

  it('leaves out the terms in half the rows or more (BM25 weighs them 1e-6), unless none is left, and those in none', () => {
    const rows: Record<string, number> = { the: 10, deploy: 3, main: 5, branch: 4 };
    const rowsWith = (term: string) => rows[term] ?? 0;
    expect(weightedTerms(['the', 'deploy', 'main', 'branch', 'unseen'], 10, rowsWith)).toEqual(['deploy', 'branch']);
    expect(weightedTerms(['the', 'main'], 10, rowsWith)).toEqual(['the', 'main']);
  });
});

describe('SqliteCorpusStore', () => {
  it('ranks as BM25 does when a query word is in most chunks: that word weighs nothing and is left out', async () => {
    const { db, store } = open();
    const corpus = await store.create('t', { name: 'common' });
    const texts = ['alpha the', 'beta the', 'gamma the deploy', 'delta the', 'deploy deploy the', 'epsilon'];
    await store.addDocuments(
      't',
      corpus.id,
      texts.map((text) => ({ text })),
    );
    const withCommon = await store.search('t', corpus.id, 'the deploy', 6);
    const rare = await store.search('t', corpus.id, 'deploy', 6);
    expect(withCommon.map((h) => h.text)).toEqual(rare.map((h) => h.text));
    expect(withCommon.map((h) => h.text)).toEqual(['deploy deploy the', 'gamma the deploy']);
    // What FTS5 itself scores with the word: the same order, the word adding ~1e-6.
    const table = corpusIndexTable(seqOf(db, corpus.id));
    const full = db
      .prepare<[string], { rowid: number; rank: number }>(
        `SELECT rowid, rank FROM ${table} WHERE ${table} MATCH ? ORDER BY rank LIMIT 2`,
      )
      .all('"the" OR "deploy"');
    expect(full.map((r) => -r.rank)).toEqual(withCommon.map((h) => expect.closeTo(h.score, 5)));
    // A query of common words only keeps them (they are all it has).
    expect(await store.search('t', corpus.id, 'the', 6)).toHaveLength(5);
  });

  it('deletes at once and purges every document, chunk and index entry afterwards', async () => {
    const { db, store } = open();
    const keep = await store.create('t', { name: 'keep' });
    await store.addDocuments('t', keep.id, [{ text: 'kept walrus' }]);
    const gone = await store.create('t', { name: 'gone' });
    // More chunks than one purge commit takes.
    const long = 'walrus tusks and whiskers. '.repeat(30);
    await store.addDocuments(
      't',
      gone.id,
      Array.from({ length: 500 }, () => ({ text: `${long}\n\n${long}\n\n${long}` })),
    );
    expect(count(db, 'SELECT count(*) FROM corpus_chunks')).toBeGreaterThan(1_000);

    expect(await store.delete('t', gone.id)).toBe(true);
    expect(await store.get('t', 'gone')).toBeUndefined();
    await expect(store.search('t', gone.id, 'walrus', 5)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    // A corpus of the same name, created while the old one is still being purged, starts empty.
    const again = await store.create('t', { name: 'gone' });
    expect(await store.search('t', again.id, 'walrus', 5)).toEqual([]);

    await vi.waitFor(() => expect(count(db, 'SELECT count(*) FROM corpus_purges')).toBe(0), { timeout: 10_000 });
    expect(count(db, 'SELECT count(*) FROM corpus_chunks')).toBe(1);
    expect(count(db, 'SELECT count(*) FROM corpus_documents')).toBe(1);
    const table = corpusIndexTable(seqOf(db, keep.id));
    expect(count(db, `SELECT count(*) FROM ${table} WHERE ${table} MATCH 'walrus'`)).toBe(1);
    // The purged corpus's index is gone with it.
    expect(count(db, `SELECT count(*) FROM sqlite_schema WHERE sql LIKE 'CREATE VIRTUAL TABLE corpus_fts_%'`)).toBe(2);
    expect((await store.search('t', keep.id, 'walrus', 5)).map((h) => h.text)).toEqual(['kept walrus']);
  });
});
