import { afterEach, describe, expect, it, vi } from 'vitest';
import { MAX_DOCUMENTS_PER_CORPUS, MAX_QUERY_TERMS } from '../../../src/domain/corpus.js';
import { AppError } from '../../../src/domain/errors.js';
import { createSqliteCorpusStore, type SqliteCorpusStore } from '../../../src/store/sqlite/corpora.repo.js';
import { corpusIndexTable } from '../../../src/store/sqlite/corpus-index.js';
import { type Db, openDatabase } from '../../../src/store/sqlite/db.js';
import { anyOf, queryTerms, weightedTerms } from '../../../src/store/sqlite/fts-query.js';
import { createGroupCommitter } from '../../../src/store/sqlite/group-commit.js';

/** The SQLite corpus store over a real in-memory database (migrations/sqlite/0011). */

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
  it('ranks the chunk that holds the query words first, score larger is better', async () => {
    const { store } = open();
    const corpus = await store.create('t', { name: 'ops' });
    await store.addDocuments('t', corpus.id, [
      { title: 'Lunch', text: 'The cafeteria serves soup on Mondays and pasta on Fridays.' },
      { title: 'Deploys', text: 'Deploys run from the main branch; roll back a deploy with the previous release tag.' },
      { title: 'Branches', text: 'Feature branches are merged after review.' },
    ]);
    const hits = await store.search('t', corpus.id, 'how do I roll back a deploy', 3);
    expect(hits[0]).toMatchObject({ title: 'Deploys', position: 0 });
    expect(hits[0]?.chunkId).toBe(`${hits[0]?.documentId}:0`);
    for (let i = 1; i < hits.length; i++) expect(hits[i - 1]?.score).toBeGreaterThanOrEqual(hits[i]?.score as number);
    expect(hits.every((h) => h.score > 0)).toBe(true);
    // Porter stemming: "deploying" finds "Deploys".
    expect((await store.search('t', corpus.id, 'deploying', 3))[0]?.title).toBe('Deploys');
    expect(await store.search('t', corpus.id, '"*:()', 3)).toEqual([]);
  });

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

  it('never returns chunks of another corpus or another tenant', async () => {
    const { store } = open();
    const a = await store.create('a', { name: 'same' });
    const b = await store.create('b', { name: 'same' });
    const a2 = await store.create('a', { name: 'other' });
    await store.addDocuments('a', a.id, [{ text: 'zebra crossing in the city' }]);
    await store.addDocuments('b', b.id, [{ text: 'zebra stripes are black and white' }]);
    await store.addDocuments('a', a2.id, [{ text: 'zebra in another corpus' }]);
    const hits = await store.search('a', a.id, 'zebra', 50);
    expect(hits.map((h) => h.text)).toEqual(['zebra crossing in the city']);
    await expect(store.search('a', b.id, 'zebra', 5)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(store.addDocuments('a', b.id, [{ text: 'x' }])).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(await store.get('a', b.id)).toBeUndefined();
    expect(await store.get('a', 'same')).toMatchObject({ id: a.id });
    expect(await store.delete('a', b.id)).toBe(false);
    expect((await store.list('a', { cursor: null, limit: 10 })).items.map((c) => c.id)).toEqual([a2.id, a.id]);
  });

  it('inserts 250 documents in one call and keeps the counts', async () => {
    const { db, store } = open();
    const corpus = await store.create('t', { name: 'bulk' });
    const documents = Array.from({ length: 250 }, (_, i) => ({
      title: `doc ${i}`,
      text: `Document number ${i} mentions topic${i % 10}. `.repeat(40),
      metadata: { i },
    }));
    const added = await store.addDocuments('t', corpus.id, documents);
    expect(added.documentIds).toHaveLength(250);
    expect(new Set(added.documentIds).size).toBe(250);
    expect(added.corpus).toMatchObject({ documentCount: 250, chunkCount: added.chunks });
    expect(added.chunks).toBeGreaterThan(250);
    expect(count(db, 'SELECT count(*) FROM corpus_chunks')).toBe(added.chunks);
    expect(await store.search('t', corpus.id, 'topic7', 50)).toHaveLength(50);
  });

  it('refuses past MAX_DOCUMENTS_PER_CORPUS, naming the limit, and writes nothing of that call', async () => {
    const { db, store } = open();
    const corpus = await store.create('t', { name: 'full' });
    const batch = Array.from({ length: 500 }, (_, i) => ({ text: `tiny ${i}` }));
    for (let n = 0; n < MAX_DOCUMENTS_PER_CORPUS; n += batch.length) await store.addDocuments('t', corpus.id, batch);
    const refused = await store.addDocuments('t', corpus.id, [{ text: 'one more' }]).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({
      code: 'LIMIT_EXCEEDED',
      message: expect.stringContaining('MAX_DOCUMENTS_PER_CORPUS'),
    });
    expect(count(db, 'SELECT count(*) FROM corpus_documents')).toBe(MAX_DOCUMENTS_PER_CORPUS);
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

  it('resumes an interrupted purge when the store is created again', async () => {
    const { db, store } = open();
    const corpus = await store.create('t', { name: 'c' });
    await store.addDocuments('t', corpus.id, [{ text: 'some words' }]);
    store.stop();
    await store.delete('t', corpus.id);
    expect(count(db, 'SELECT count(*) FROM corpus_purges')).toBe(1);
    const restarted = createSqliteCorpusStore(db, createGroupCommitter(db), { now: Date.now, onError: () => {} });
    await vi.waitFor(() => expect(count(db, 'SELECT count(*) FROM corpus_purges')).toBe(0));
    expect(count(db, 'SELECT count(*) FROM corpus_chunks')).toBe(0);
    restarted.stop();
  });

  it('refuses a duplicate name (CONFLICT) and a name that looks like an id', async () => {
    const { store } = open();
    await store.create('t', { name: 'x' });
    await expect(store.create('t', { name: 'x' })).rejects.toMatchObject({ code: 'CONFLICT' });
    await expect(store.create('u', { name: 'x' })).resolves.toMatchObject({ name: 'x', tenantId: 'u' });
    await expect(store.create('t', { name: 'cp_123' })).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
  });

  it('pages newest first with a cursor', async () => {
    const { store } = open();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await store.create('t', { name: `c${i}` })).id);
    const first = await store.list('t', { cursor: null, limit: 2 });
    const second = await store.list('t', { cursor: first.nextCursor, limit: 2 });
    const third = await store.list('t', { cursor: second.nextCursor, limit: 2 });
    expect([...first.items, ...second.items, ...third.items].map((c) => c.id)).toEqual(ids.reverse());
    expect(third.nextCursor).toBeNull();
  });
});
