import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  MAX_CORPORA_PER_TENANT,
  MAX_DOCUMENTS_PER_CORPUS,
  MAX_QUERY_CHARS,
  MAX_SEARCH_K,
} from '../../src/domain/corpus.js';
import { AppError } from '../../src/domain/errors.js';
import type { CorpusStore } from '../../src/domain/ports.js';
import { FACTS, fillerDocument } from '../support/corpus-fixture.js';
import { CORPUS_STORE_ADAPTERS as ADAPTERS, type OpenedCorpusStore } from './corpus-store-adapters.js';

/**
 * What every CorpusStore adapter promises, through the port alone: BM25 ranking best first with
 * stemming and query words taken literally, tenant and corpus scoping, limits, names, paging, and
 * delete-now-purge-later — and, at the end, that both adapters answer the same inputs with the
 * same hits and the same scores (PostgreSQL scores FTS5's bm25() itself: store/postgres/corpus-search.ts).
 *
 * Where they differ, by design, and said here:
 * - U+0000 in a description or a document title: SQLite keeps it, PostgreSQL text cannot hold it
 *   and refuses it (VALIDATION_ERROR); an id or name with one is no corpus on either.
 * - A query word unicode61 splits in several tokens is a phrase to FTS5 and separate terms to
 *   PostgreSQL (the recall case below holds on both).
 * - Past MAX_SCORED_ROWS chunks for one rarest word, SQLite scores the first by id, PostgreSQL the
 *   first in table order (the same in a table that has reused no space).
 */

const T = 'tenant-a';

describe.each(ADAPTERS)('CorpusStore contract: $name', (adapter) => {
  let fx: OpenedCorpusStore;
  let store: CorpusStore;
  beforeEach(async () => {
    fx = await adapter.open();
    store = fx.store;
  });
  afterEach(async () => {
    await fx.close();
  });

  it('ranks the chunk that holds the query words first, score larger is better, words stemmed', async () => {
    const corpus = await store.create(T, { name: 'ops' });
    await store.addDocuments(T, corpus.id, [
      { title: 'Lunch', text: 'The cafeteria serves soup on Mondays and pasta on Fridays.' },
      { title: 'Deploys', text: 'Deploys run from the main branch; roll back a deploy with the previous release tag.' },
      { title: 'Branches', text: 'Feature branches are merged after review.' },
    ]);
    const hits = await store.search(T, corpus.id, 'how do I roll back a deploy', 3);
    expect(hits[0]).toMatchObject({ title: 'Deploys', position: 0 });
    expect(hits[0]?.chunkId).toBe(`${hits[0]?.documentId}:0`);
    for (let i = 1; i < hits.length; i++) expect(hits[i - 1]?.score).toBeGreaterThanOrEqual(hits[i]?.score as number);
    expect(hits.every((h) => h.score > 0)).toBe(true);
    expect((await store.search(T, corpus.id, 'deploying', 3))[0]?.title).toBe('Deploys');
    expect((await store.search(T, corpus.id, 'BRANCHING', 3)).map((h) => h.title)).toEqual(['Branches', 'Deploys']);
  });

  it('leaves out a word in most chunks (BM25 weighs it 1e-6), unless it is all the query has', async () => {
    const corpus = await store.create(T, { name: 'common' });
    const texts = ['alpha the', 'beta the', 'gamma the deploy', 'delta the', 'deploy deploy the', 'epsilon'];
    await store.addDocuments(
      T,
      corpus.id,
      texts.map((text) => ({ text })),
    );
    const withCommon = await store.search(T, corpus.id, 'the deploy', 6);
    expect(withCommon.map((h) => h.text)).toEqual(['deploy deploy the', 'gamma the deploy']);
    expect((await store.search(T, corpus.id, 'deploy', 6)).map((h) => h.text)).toEqual(withCommon.map((h) => h.text));
    expect(await store.search(T, corpus.id, 'the', 6)).toHaveLength(5);
  });

  it('takes every query word literally: FTS5 and tsquery syntax, quotes and huge input find words or nothing', async () => {
    const corpus = await store.create(T, { name: 'syntax' });
    await store.addDocuments(T, corpus.id, [
      { title: 'ops', text: 'Operators: deploy AND rollback OR NOT canary; NEAR the edge.' },
      { title: 'other', text: 'Nothing of interest here.' },
    ]);
    for (const query of [
      '"*:()',
      "'",
      "''",
      '!',
      '&|<->:*',
      '\\',
      '-- ; DROP TABLE corpora',
      "'; SELECT pg_sleep(10); --",
      '\u0000',
      ' \t\n',
    ]) {
      expect(await store.search(T, corpus.id, query, 5), query).toEqual([]);
    }
    for (const query of [
      'deploy & rollback',
      'deploy | !canary',
      'deploy <-> rollback',
      'deploy:*',
      "deploy' | 'x",
      'NEAR(deploy rollback)',
      'text:deploy',
      '"deploy" AND "rollback"',
      'deploy\u0000rollback',
      `${'zzz '.repeat(200)}deploy`,
    ]) {
      const hits = await store.search(T, corpus.id, query, 5);
      expect(
        hits.map((h) => h.title),
        query,
      ).toEqual(['ops']);
    }
    await expect(store.search(T, corpus.id, 'x'.repeat(MAX_QUERY_CHARS + 1), 5)).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
    });
    await expect(store.search(T, corpus.id, 'x'.repeat(MAX_QUERY_CHARS), 5)).resolves.toEqual([]);
    for (const k of [0, MAX_SEARCH_K + 1, 1.5, Number.NaN]) {
      await expect(store.search(T, corpus.id, 'deploy', k), String(k)).rejects.toMatchObject({
        code: 'VALIDATION_ERROR',
      });
    }
  });

  it('never returns chunks of another corpus or another tenant', async () => {
    const a = await store.create('a', { name: 'same' });
    const b = await store.create('b', { name: 'same' });
    const a2 = await store.create('a', { name: 'other' });
    await store.addDocuments('a', a.id, [{ text: 'zebra crossing in the city' }]);
    await store.addDocuments('b', b.id, [{ text: 'zebra stripes are black and white' }]);
    await store.addDocuments('a', a2.id, [{ text: 'zebra in another corpus' }]);
    expect((await store.search('a', a.id, 'zebra', 50)).map((h) => h.text)).toEqual(['zebra crossing in the city']);
    await expect(store.search('a', b.id, 'zebra', 5)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(store.addDocuments('a', b.id, [{ text: 'x' }])).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(await store.get('a', b.id)).toBeUndefined();
    expect(await store.get('a', 'same')).toMatchObject({ id: a.id });
    expect(await store.get('a', 'same\u0000')).toBeUndefined();
    expect(await store.delete('a', b.id)).toBe(false);
    expect((await store.list('a', { cursor: null, limit: 10 })).items.map((c) => c.id)).toEqual([a2.id, a.id]);
  });

  it("another tenant's uploads change no score of a search", async () => {
    const mine = await store.create('a', { name: 'mine' });
    await store.addDocuments('a', mine.id, [...FACTS, ...Array.from({ length: 30 }, (_, i) => fillerDocument(i))]);
    const before = await store.search('a', mine.id, 'river delta sea', 8);
    const theirs = await store.create('b', { name: 'theirs' });
    await store.addDocuments(
      'b',
      theirs.id,
      Array.from({ length: 50 }, (_, i) => ({ text: `river river delta ${i}` })),
    );
    expect(await store.search('a', mine.id, 'river delta sea', 8)).toEqual(before);
  });

  it('inserts 250 documents in one call and keeps the counts', async () => {
    const corpus = await store.create(T, { name: 'bulk' });
    const documents = Array.from({ length: 250 }, (_, i) => ({
      title: `doc ${i}`,
      text: `Document number ${i} mentions topic${i % 10}. `.repeat(40),
      metadata: { i },
    }));
    const added = await store.addDocuments(T, corpus.id, documents);
    expect(added.documentIds).toHaveLength(250);
    expect(new Set(added.documentIds).size).toBe(250);
    expect(added.corpus).toMatchObject({ documentCount: 250, chunkCount: added.chunks });
    expect(added.chunks).toBeGreaterThan(250);
    expect((await fx.rows()).chunks).toBe(added.chunks);
    expect(await store.search(T, corpus.id, 'topic7', 50)).toHaveLength(50);
    expect(await store.get(T, corpus.id)).toEqual(added.corpus);
  });

  it('refuses past MAX_DOCUMENTS_PER_CORPUS, naming the limit, and writes nothing of that call', async () => {
    const corpus = await store.create(T, { name: 'full' });
    const batch = Array.from({ length: 500 }, (_, i) => ({ text: `tiny ${i}` }));
    for (let n = 0; n < MAX_DOCUMENTS_PER_CORPUS; n += batch.length) await store.addDocuments(T, corpus.id, batch);
    const refused = await store.addDocuments(T, corpus.id, [{ text: 'one more' }]).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({
      code: 'LIMIT_EXCEEDED',
      message: expect.stringContaining('MAX_DOCUMENTS_PER_CORPUS'),
    });
    expect((await fx.rows()).documents).toBe(MAX_DOCUMENTS_PER_CORPUS);
    await expect(store.addDocuments(T, corpus.id, [{ text: '   ' }])).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
    });
  }, 60_000);

  it('refuses a duplicate name (CONFLICT), a name that looks like an id, and corpora past the limit', async () => {
    await store.create(T, { name: 'x' });
    await expect(store.create(T, { name: 'x' })).rejects.toMatchObject({ code: 'CONFLICT' });
    await expect(store.create('u', { name: 'x' })).resolves.toMatchObject({ name: 'x', tenantId: 'u' });
    await expect(store.create(T, { name: 'cp_123' })).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    for (let i = 1; i < MAX_CORPORA_PER_TENANT; i++) await store.create(T, { name: `n${i}` });
    await expect(store.create(T, { name: 'one-more' })).rejects.toMatchObject({
      code: 'LIMIT_EXCEEDED',
      message: expect.stringContaining('MAX_CORPORA_PER_TENANT'),
    });
  });

  it('gives one name to one of two instances creating it at once, and never passes the corpora limit', async () => {
    const peer = await fx.peer();
    const results = await Promise.allSettled([store.create(T, { name: 'race' }), peer.create(T, { name: 'race' })]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(results.find((r) => r.status === 'rejected')).toMatchObject({ reason: { code: 'CONFLICT' } });
    for (let i = 1; i < MAX_CORPORA_PER_TENANT - 1; i++) await store.create(T, { name: `n${i}` });
    const last = await Promise.allSettled([store.create(T, { name: 'last-a' }), peer.create(T, { name: 'last-b' })]);
    expect(last.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(last.find((r) => r.status === 'rejected')).toMatchObject({ reason: { code: 'LIMIT_EXCEEDED' } });
    expect((await store.list(T, { cursor: null, limit: 200 })).items).toHaveLength(MAX_CORPORA_PER_TENANT);
  });

  it('pages newest first with a cursor', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await store.create(T, { name: `c${i}` })).id);
    const first = await store.list(T, { cursor: null, limit: 2 });
    const second = await store.list(T, { cursor: first.nextCursor, limit: 2 });
    const third = await store.list(T, { cursor: second.nextCursor, limit: 2 });
    expect([...first.items, ...second.items, ...third.items].map((c) => c.id)).toEqual(ids.reverse());
    expect(third.nextCursor).toBeNull();
    await expect(store.list(T, { cursor: null, limit: 0 })).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
  });

  it('deletes at once, frees the name, and purges every document and chunk afterwards', async () => {
    const keep = await store.create(T, { name: 'keep' });
    await store.addDocuments(T, keep.id, [{ text: 'kept walrus' }]);
    const gone = await store.create(T, { name: 'gone' });
    // More chunks than one purge commit takes.
    const long = 'walrus tusks and whiskers. '.repeat(30);
    await store.addDocuments(
      T,
      gone.id,
      Array.from({ length: 500 }, () => ({ text: `${long}\n\n${long}\n\n${long}` })),
    );
    expect((await fx.rows()).chunks).toBeGreaterThan(1_000);

    expect(await store.delete(T, gone.id)).toBe(true);
    expect(await store.delete(T, gone.id)).toBe(false);
    expect(await store.get(T, 'gone')).toBeUndefined();
    await expect(store.search(T, gone.id, 'walrus', 5)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(store.addDocuments(T, gone.id, [{ text: 'late' }])).rejects.toMatchObject({ code: 'NOT_FOUND' });
    // A corpus of the same name, created while the old one is still being purged, starts empty.
    const again = await store.create(T, { name: 'gone' });
    expect(await store.search(T, again.id, 'walrus', 5)).toEqual([]);

    await vi.waitFor(async () => expect((await fx.rows()).purges).toBe(0), { timeout: 20_000 });
    expect(await fx.rows()).toEqual({ documents: 1, chunks: 1, purges: 0 });
    expect((await store.search(T, keep.id, 'walrus', 5)).map((h) => h.text)).toEqual(['kept walrus']);
  }, 60_000);

  it('resumes an interrupted purge when the store is created again', async () => {
    const corpus = await store.create(T, { name: 'c' });
    await store.addDocuments(T, corpus.id, [{ text: 'some words' }]);
    await fx.stop();
    await store.delete(T, corpus.id);
    expect((await fx.rows()).purges).toBe(1);
    await fx.restart();
    await vi.waitFor(async () => expect(await fx.rows()).toEqual({ documents: 0, chunks: 0, purges: 0 }));
  });

  it('keeps U+0000 in a description or title on SQLite, refuses it on PostgreSQL (its text cannot hold it)', async () => {
    const nul = { name: 'nul', description: 'a\u0000b' };
    const titled = [{ title: 't\u0000', text: 'words' }];
    if (adapter.name === 'sqlite') {
      const corpus = await store.create(T, nul);
      expect(corpus.description).toBe('a\u0000b');
      await expect(store.addDocuments(T, corpus.id, titled)).resolves.toMatchObject({ chunks: 1 });
    } else {
      await expect(store.create(T, nul)).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
      const corpus = await store.create(T, { name: 'nul' });
      await expect(store.addDocuments(T, corpus.id, titled)).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
      // Text and metadata with one are kept (compressed bytes, escaped JSON).
      await expect(
        store.addDocuments(T, corpus.id, [{ text: 'nul\u0000byte', metadata: { k: '\u0000' } }]),
      ).resolves.toMatchObject({ chunks: 1 });
      expect((await store.search(T, corpus.id, 'byte', 1))[0]?.text).toBe('nul\u0000byte');
    }
  });

  it('answers a search racing a delete with its hits or NOT_FOUND, nothing else', async () => {
    const corpus = await store.create(T, { name: 'racing' });
    await store.addDocuments(
      T,
      corpus.id,
      Array.from({ length: 200 }, (_, i) => ({ text: `granite harbor ${i % 7 === 0 ? 'willow' : 'reed'} ${i}` })),
    );
    const peer = await fx.peer();
    const searches = Array.from({ length: 4 }, () => peer.search(T, corpus.id, 'granite harbor willow', 8));
    const deleted = store.delete(T, corpus.id);
    const outcomes = await Promise.allSettled([...searches, deleted]);
    expect(await deleted).toBe(true);
    for (const outcome of outcomes.slice(0, -1)) {
      if (outcome.status === 'fulfilled') expect((outcome.value as unknown[]).length).toBeGreaterThan(0);
      else expect(outcome.reason).toMatchObject({ code: 'NOT_FOUND' });
    }
    await expect(peer.search(T, corpus.id, 'granite', 8)).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('refuses a search past SEARCH_CONCURRENCY_PER_TENANT at once (RATE_LIMITED) and admits again after', async () => {
    const corpus = await store.create(T, { name: 'busy' });
    await store.addDocuments(T, corpus.id, [{ text: 'busy words' }]);
    const outcomes = await Promise.allSettled(Array.from({ length: 12 }, () => store.search(T, corpus.id, 'busy', 1)));
    const refused = outcomes.filter((o) => o.status === 'rejected');
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) expect(r).toMatchObject({ reason: { code: 'RATE_LIMITED' } });
    expect(await store.search(T, corpus.id, 'busy', 1)).toHaveLength(1);
  });
});

/** A corpus with prose, filler, repeats, accents and other scripts: what a parity check ranks. */
function parityDocuments() {
  const extra = [
    { title: 'Accents', text: 'Café crème, naïve façade; Ærøskøbing and São Paulo. CAFÉ again: cafe.' },
    { title: 'Greek', text: 'ΟΔΟΣ οδός — ἀρχή, the Greek word for beginning; Σίσυφος.' },
    { title: 'Cyrillic', text: 'Москва и Санкт-Петербург: реки Нева и Москва-река.' },
    { title: 'CJK', text: '東京は日本の首都です。北京は中国の首都です。' },
    { title: 'Emoji', text: 'Deploy 🚀 rocket 🤖 robot launches; 🚀🚀 liftoff.' },
    { title: 'Code', text: 'function deploy_service(x) { return rollback(x) && canary_release(); } // v1.2.3' },
    { title: 'Repeats', text: 'river '.repeat(60) },
    { title: 'Long', text: `${'The Danube delta is a wetland of reeds and channels. '.repeat(40)}Sea.` },
  ];
  return [...FACTS, ...extra, ...Array.from({ length: 120 }, (_, i) => fillerDocument(i))];
}

const PARITY_QUERIES = [
  'river delta sea',
  'Danube Vienna Budapest',
  'the river',
  'cafe creme',
  'CAFÉ',
  'οδος',
  'Москва',
  '東京',
  'rocket 🚀 robot',
  'deploy_service rollback',
  'rivers flowing crossing',
  'granite harbor willow xenon zephyr',
  'alpha beacon cedar delta ember falcon granite harbor island juniper kestrel lantern meadow',
  'river river river',
  'running rivers reached',
  'nothing-here-at-all',
];

describe('CorpusStore contract: the same inputs, the same answers on both adapters', () => {
  it('ranks every query alike, with equal scores', async () => {
    const opened = await Promise.all(ADAPTERS.map((a) => a.open()));
    try {
      const answers: Array<Array<Array<{ title: string | null; position: number; text: string; score: number }>>> = [];
      for (const fx of opened) {
        const corpus = await fx.store.create(T, { name: 'parity' });
        await fx.store.addDocuments(T, corpus.id, parityDocuments());
        const perQuery = [];
        for (const query of PARITY_QUERIES) {
          const hits = await fx.store.search(T, corpus.id, query, 20);
          perQuery.push(hits.map((h) => ({ title: h.title, position: h.position, text: h.text, score: h.score })));
        }
        answers.push(perQuery);
      }
      const [sqlite, postgres] = answers as [(typeof answers)[0], (typeof answers)[0]];
      PARITY_QUERIES.forEach((query, q) => {
        const a = sqlite[q] ?? [];
        const b = postgres[q] ?? [];
        expect(
          b.map((h) => [h.title, h.position]),
          query,
        ).toEqual(a.map((h) => [h.title, h.position]));
        b.forEach((h, i) => {
          expect(h.score, `${query} #${i}`).toBeCloseTo(a[i]?.score as number, 9);
        });
      });
      expect(sqlite.filter((hits) => hits.length > 0).length).toBeGreaterThan(10);
    } finally {
      await Promise.all(opened.map((fx) => fx.close()));
    }
  });

  it('finds the same chunks, in any order, for words unicode61 splits (a phrase to FTS5 only)', async () => {
    const opened = await Promise.all(ADAPTERS.map((a) => a.open()));
    try {
      const found: string[][] = [];
      for (const fx of opened) {
        const corpus = await fx.store.create(T, { name: 'split' });
        await fx.store.addDocuments(T, corpus.id, [
          { title: 'Hindi', text: 'हिन्दी भाषा भारत में बोली जाती है।' },
          { title: 'Thai', text: 'ภาษาไทย เป็นภาษาราชการของประเทศไทย' },
          { title: 'English', text: 'Plain English words only.' },
        ]);
        const titles = new Set<string>();
        for (const query of ['हिन्दी', 'ภาษาไทย']) {
          for (const hit of await fx.store.search(T, corpus.id, query, 5)) titles.add(hit.title ?? '');
        }
        found.push([...titles].sort());
      }
      expect(found[1]).toEqual(found[0]);
      expect(found[0]).toEqual(['Hindi', 'Thai']);
    } finally {
      await Promise.all(opened.map((fx) => fx.close()));
    }
  });
});
