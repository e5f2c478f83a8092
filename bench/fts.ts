/**
 * Corpus search (goal: FTS5 search over 10 000 chunks < 20 ms, median and p99).
 *
 * What it measures, on a WAL database file as the service opens it:
 * - builds one corpus of ≥ 10 000 chunks through the store (`addDocuments`, 250 documents per call
 *   as a client would send them): synthetic prose from a seeded generator over a vocabulary of
 *   3 000 made-up words with a Zipf-like frequency, so some terms match thousands of chunks and
 *   others a handful;
 * - 200 searches (after 50 warm-up ones) of 3-8 words drawn the same way, k = 8, through
 *   `CorpusStore.search` (tenant check, MATCH, BM25 ordering, the join back to text and title);
 * - the same searches again after another tenant's corpus of the same size was added, so the FTS
 *   index holds twice the rows: what the per-corpus token in the MATCH keeps out of the ranking;
 * - the reference, in this same run: a bare `SELECT … WHERE id = ?` on the chunks table, per call.
 *
 * Env: BENCH_FTS_CHUNKS (default 10000), BENCH_FTS_QUERIES (default 200).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { NewDocument } from '../src/domain/corpus.js';
import type { CorpusStore } from '../src/domain/ports.js';
import { createSqliteCorpusStore } from '../src/store/sqlite/corpora.repo.js';
import { openDatabase } from '../src/store/sqlite/db.js';
import { createGroupCommitter } from '../src/store/sqlite/group-commit.js';

const CHUNKS = Number(process.env.BENCH_FTS_CHUNKS ?? 10_000);
const QUERIES = Number(process.env.BENCH_FTS_QUERIES ?? 200);
const WARMUP = 50;
const VOCABULARY = 3_000;
const K = 8;

/** mulberry32: a small seeded generator, so every run searches the same corpus with the same queries. */
function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const random = seeded(20_240_601);
const syllables = ['ka', 'lo', 'mi', 'ren', 'sut', 'pra', 'vel', 'dor', 'ix', 'no', 'qua', 'tem', 'bri', 'osh'];
const vocabulary = Array.from({ length: VOCABULARY }, (_, i) => {
  let word = '';
  for (let n = i + VOCABULARY; n > 0; n = Math.floor(n / syllables.length)) word += syllables[n % syllables.length];
  return word;
});
/** Zipf-like: the word of rank r is drawn with a probability roughly proportional to 1/r. */
const word = (): string => vocabulary[Math.floor(VOCABULARY ** random()) - 1] as string;

function paragraph(): string {
  const sentences: string[] = [];
  for (let s = 0, n = 3 + Math.floor(random() * 5); s < n; s++) {
    const words = Array.from({ length: 6 + Math.floor(random() * 12) }, word);
    sentences.push(`${words.join(' ')}.`);
  }
  return sentences.join(' ');
}

function documents(count: number): NewDocument[] {
  return Array.from({ length: count }, (_, i) => ({
    title: `Document ${i}`,
    text: Array.from({ length: 3 + Math.floor(random() * 6) }, paragraph).join('\n\n'),
  }));
}

async function fill(store: CorpusStore, tenantId: string, name: string): Promise<{ id: string; seconds: number }> {
  const corpus = await store.create(tenantId, { name });
  const started = performance.now();
  let chunks = 0;
  while (chunks < CHUNKS) chunks = (await store.addDocuments(tenantId, corpus.id, documents(250))).corpus.chunkCount;
  return { id: corpus.id, seconds: (performance.now() - started) / 1000 };
}

const queries = Array.from({ length: WARMUP + QUERIES }, () =>
  Array.from({ length: 3 + Math.floor(random() * 6) }, word).join(' '),
);

function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
}

const ms = (value: number): number => Math.round(value * 1000) / 1000;

async function timeSearches(store: CorpusStore, tenantId: string, corpusId: string) {
  const times: number[] = [];
  let hits = 0;
  for (const [i, query] of queries.entries()) {
    const started = performance.now();
    const found = await store.search(tenantId, corpusId, query, K);
    const elapsed = performance.now() - started;
    if (i >= WARMUP) {
      times.push(elapsed);
      hits += found.length;
    }
  }
  times.sort((a, b) => a - b);
  return { median_ms: ms(quantile(times, 0.5)), p99_ms: ms(quantile(times, 0.99)), mean_hits: hits / QUERIES };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'baton-bench-fts-'));
  try {
    const db = openDatabase(join(dir, 'fts.db'), { synchronous: 'NORMAL' });
    const store = createSqliteCorpusStore(db, createGroupCommitter(db), {
      now: Date.now,
      onError: (err) => console.error(err),
    });
    const corpus = await fill(store, 'bench', 'corpus');
    const record = await store.get('bench', corpus.id);
    const alone = await timeSearches(store, 'bench', corpus.id);

    const select = db.prepare<[number], { text: string }>('SELECT text FROM corpus_chunks WHERE id = ?');
    const maxId = db.prepare('SELECT max(id) FROM corpus_chunks').pluck().get() as number;
    const reference: number[] = [];
    for (let i = 0; i < WARMUP + QUERIES; i++) {
      const id = 1 + Math.floor(random() * maxId);
      const started = performance.now();
      select.get(id);
      if (i >= WARMUP) reference.push(performance.now() - started);
    }
    reference.sort((a, b) => a - b);

    await fill(store, 'neighbour', 'corpus');
    const shared = await timeSearches(store, 'bench', corpus.id);
    store.stop();
    db.close();

    console.log(
      JSON.stringify({
        bench: 'fts',
        goal: 'FTS5 search over 10 000 chunks < 20 ms',
        goal_ms: 20,
        chunks: record?.chunkCount,
        documents: record?.documentCount,
        corpus_mb: Math.round(((record?.bytes ?? 0) / 1024 / 1024) * 10) / 10,
        vocabulary: VOCABULARY,
        queries: QUERIES,
        terms_per_query: '3-8',
        k: K,
        search_median_ms: alone.median_ms,
        search_p99_ms: alone.p99_ms,
        mean_hits: alone.mean_hits,
        with_neighbour_corpus_median_ms: shared.median_ms,
        with_neighbour_corpus_p99_ms: shared.p99_ms,
        reference_pk_select_median_ms: ms(quantile(reference, 0.5)),
        reference_pk_select_p99_ms: ms(quantile(reference, 0.99)),
        index_build_s: Math.round(corpus.seconds * 100) / 100,
      }),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
