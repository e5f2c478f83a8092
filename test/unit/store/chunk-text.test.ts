import { afterEach, describe, expect, it, vi } from 'vitest';
import { chunkText } from '../../../src/domain/corpus.js';
import { unpackChunk } from '../../../src/store/chunk-text.js';
import { createSqliteCorpusStore, type SqliteCorpusStore } from '../../../src/store/sqlite/corpora.repo.js';
import { buildMissingCorpusIndexes, dropCorpusIndex } from '../../../src/store/sqlite/corpus-index.js';
import { type Db, openDatabase } from '../../../src/store/sqlite/db.js';
import { createGroupCommitter } from '../../../src/store/sqlite/group-commit.js';

/**
 * Chunk text stored compressed (store/chunk-text.ts, migrations/sqlite/0023): what a search returns is the
 * chunk as cut, byte for byte; rows written before 0023 (TEXT) are read as they are and rewritten in
 * the background; a missing index is rebuilt from either form.
 */

const opened: Array<{ db: Db; stores: SqliteCorpusStore[]; flush: Array<() => void> }> = [];
/** A store over `db`, as a (re)start creates it; closed with the database after the test. */
function storeOver(db: Db): SqliteCorpusStore {
  const committer = createGroupCommitter(db);
  const store = createSqliteCorpusStore(db, committer, {
    now: () => 1_700_000_000_000,
    onError: (err) => {
      throw err;
    },
  });
  let entry = opened.find((o) => o.db === db);
  if (entry === undefined) {
    entry = { db, stores: [], flush: [] };
    opened.push(entry);
  }
  entry.stores.push(store);
  entry.flush.push(() => committer.flushNow());
  return store;
}
function open(): { db: Db; store: SqliteCorpusStore } {
  const db = openDatabase(':memory:', { synchronous: 'NORMAL' });
  return { db, store: storeOver(db) };
}
afterEach(() => {
  // As deps.close: stop the background loops, commit what they queued, then close.
  for (const { db, stores, flush } of opened.splice(0)) {
    for (const store of stores) store.stop();
    for (const f of flush) f();
    db.close();
  }
});

const count = (db: Db, sql: string): number => db.prepare(sql).pluck().get() as number;

/** Words from many scripts, an emoji (a surrogate pair), combining marks, markdown and code. */
const MIXED = [
  '# Déploiement\n\nLe déploiement part de `main` après la CI verte. Ünïcödé façade naïve résumé.',
  '部署从主分支开始。回滚使用上一个发布标签。 東京 大阪 名古屋 🚀🚀 rocket launches ✅ done.',
  '```ts\nconst deploy = async (tag: string) => rollback(tag);\n```\n\nΚαλημέρα κόσμε — e\u0301 vs é, Ω.',
].map((paragraph, i) => `${paragraph} `.repeat(8 + i * 3));

describe('compressed chunk text', () => {
  it('stores every chunk as a BLOB and returns it exactly as the chunker cut it', async () => {
    const { db, store } = open();
    const corpus = await store.create('t', { name: 'mixed' });
    await store.addDocuments(
      't',
      corpus.id,
      MIXED.map((text, i) => ({ title: `m${i}`, text })),
    );
    expect(count(db, "SELECT count(*) FROM corpus_chunks WHERE typeof(text) <> 'blob'")).toBe(0);
    const expected = new Map(MIXED.map((text, i) => [`m${i}`, chunkText(text)]));
    const hits = [];
    for (const q of ['déploiement', '部署从主分支开始', 'rocket', 'Καλημέρα'])
      hits.push(...(await store.search('t', corpus.id, q, 50)));
    expect(new Set(hits.map((h) => h.title))).toEqual(new Set(['m0', 'm1', 'm2']));
    for (const hit of hits) expect(hit.text).toBe(expected.get(hit.title as string)?.[hit.position]);
  });

  it('reads rows written before migrations/sqlite/0023 as TEXT and compresses them in the background', async () => {
    const { db, store } = open();
    const corpus = await store.create('t', { name: 'old' });
    // More chunks than one background commit rewrites.
    const long = 'walrus tusks and whiskers on the northern ice. '.repeat(20);
    await store.addDocuments(
      't',
      corpus.id,
      Array.from({ length: 400 }, (_, i) => ({ title: `w${i}`, text: `${long} number${i}\n\n${long}\n\n${long}` })),
    );
    const before = await store.search('t', corpus.id, 'walrus number7', 50);
    // What a database written before 0023 holds: the text itself.
    const rows = db.prepare<[], { id: number; text: Buffer }>('SELECT id, text FROM corpus_chunks').all();
    const setText = db.prepare<[string, number]>('UPDATE corpus_chunks SET text = ? WHERE id = ?');
    for (const row of rows) setText.run(unpackChunk(row.text), row.id);
    expect(rows.length).toBeGreaterThan(1_000);
    expect(count(db, "SELECT count(*) FROM corpus_chunks WHERE typeof(text) = 'text'")).toBe(rows.length);
    expect(await store.search('t', corpus.id, 'walrus number7', 50)).toEqual(before);
    // The legacy rows are found through the partial index, not a scan of every chunk.
    const plan = db
      .prepare("EXPLAIN QUERY PLAN SELECT id, text FROM corpus_chunks WHERE typeof(text) = 'text' ORDER BY id LIMIT 1")
      .all() as Array<{ detail: string }>;
    expect(plan.map((p) => p.detail).join(' ')).toContain('corpus_chunks_legacy_text');

    store.stop();
    const restarted = storeOver(db);
    await vi.waitFor(() => expect(count(db, "SELECT count(*) FROM corpus_chunks WHERE typeof(text) = 'text'")).toBe(0));
    expect(count(db, "SELECT count(*) FROM corpus_chunks WHERE typeof(text) = 'blob'")).toBe(rows.length);
    expect(await restarted.search('t', corpus.id, 'walrus number7', 50)).toEqual(before);
  });

  it('rebuilds a missing index from compressed rows (buildMissingCorpusIndexes)', async () => {
    const { db, store } = open();
    const corpus = await store.create('t', { name: 'rebuilt' });
    await store.addDocuments(
      't',
      corpus.id,
      MIXED.map((text, i) => ({ title: `m${i}`, text })),
    );
    const query = 'deploy rollback 東京 Ω';
    const before = await store.search('t', corpus.id, query, 50);
    expect(before.length).toBeGreaterThan(0);
    const seq = db.prepare<[string], number>('SELECT seq FROM corpora WHERE id = ?').pluck().get(corpus.id) as number;
    dropCorpusIndex(db, seq);
    expect(buildMissingCorpusIndexes(db)).toBe(1);
    const restarted = storeOver(db);
    expect(await restarted.search('t', corpus.id, query, 50)).toEqual(before);
  });
});
