import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_CORPUS_BYTES, MAX_DOCUMENTS_PER_CORPUS, MAX_DOCUMENTS_PER_REQUEST } from '../../src/domain/corpus.js';
import { createSqliteCorpusStore } from '../../src/store/sqlite/corpora.repo.js';
import { openDatabase } from '../../src/store/sqlite/db.js';
import { createGroupCommitter } from '../../src/store/sqlite/group-commit.js';
import { reportFigures } from '../support/scale.js';
import { type ServerProcess, startServer, stopAllServers, tempDir } from '../support/server-process.js';

/**
 * One search at the per-corpus cap held the event loop 1.4–1.8 s (10 in parallel:
 * /healthz worst 1.6 s). The real server process over a database file, one corpus at the cap
 * (MAX_DOCUMENTS_PER_CORPUS documents, MAX_CORPUS_BYTES of text, ~94 000 chunks), and 10 searches
 * at once of the worst kind: 64 distinct words, each in about a third of the chunks (so none is
 * left out as a common word, and together they match every chunk). /healthz, polled one request
 * after another all the while, answers within 50 ms every time (the worst of a round, median of 3).
 *
 * The corpus is seeded through the store in this process before the server starts (the documents
 * route would take the same code path, 20 requests of 500 documents, only slower): what is
 * measured is the search, not the upload. SEARCH_CONCURRENCY_PER_TENANT is 10 here so that all ten
 * searches run; one more is refused with 429 and retry-after.
 *
 * A real-time measurement: it runs in the `timing` project, last and alone.
 */

const KEY = 'key-of-tenant-a-0123456789';
const auth = { authorization: `Bearer ${KEY}` };
const PARALLEL = 10;
const HEALTHZ_BAR_MS = 50;
const ROUNDS = 3;

/** 300 made-up words: a chunk of ~120 words holds each with probability ~1/3. */
const VOCABULARY = Array.from({ length: 300 }, (_, i) => {
  const c = 'bcdfghklmnprstvz';
  const v = 'aeiou';
  return `${c[i % 16]}${v[Math.floor(i / 16) % 5]}${c[Math.floor(i / 80) % 16]}${v[i % 5]}${c[(i * 7) % 16]}o`;
});

function documentText(i: number, bytes: number): string {
  let seed = (i + 1) * 2654435761;
  const words: string[] = [];
  let length = 0;
  while (length < bytes - 8) {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    const word = VOCABULARY[seed % VOCABULARY.length] as string;
    words.push(word);
    length += word.length + 1;
  }
  return words.join(' ');
}

let server: ServerProcess;
let corpusId: string;
let chunks = 0;
const temp = tempDir('baton-search-');

beforeAll(async () => {
  const dbPath = temp.dbPath();
  const db = openDatabase(dbPath, { synchronous: 'NORMAL' });
  const store = createSqliteCorpusStore(db, createGroupCommitter(db), { now: Date.now, onError: () => {} });
  const corpus = await store.create('a', { name: 'at-the-cap' });
  corpusId = corpus.id;
  const bytesEach = Math.floor(MAX_CORPUS_BYTES / MAX_DOCUMENTS_PER_CORPUS);
  for (let start = 0; start < MAX_DOCUMENTS_PER_CORPUS; start += MAX_DOCUMENTS_PER_REQUEST) {
    const documents = Array.from({ length: MAX_DOCUMENTS_PER_REQUEST }, (_, j) => ({
      text: documentText(start + j, bytesEach),
    }));
    chunks = (await store.addDocuments('a', corpus.id, documents)).corpus.chunkCount;
  }
  store.stop();
  await store.close();
  db.close();
  server = await startServer({
    dbPath,
    env: { API_KEYS: `a:${KEY}`, SEARCH_CONCURRENCY_PER_TENANT: String(PARALLEL) },
    startTimeoutMs: 60_000,
  });
}, 600_000);

afterAll(async () => {
  await stopAllServers();
  temp.cleanup();
});

async function timed(url: string): Promise<{ ms: number; status: number; retryAfter: string | null }> {
  const started = performance.now();
  const res = await fetch(url, { headers: auth });
  await res.arrayBuffer();
  return { ms: performance.now() - started, status: res.status, retryAfter: res.headers.get('retry-after') };
}

describe('searches never hold the event loop', () => {
  it(`/healthz < ${HEALTHZ_BAR_MS} ms during ${PARALLEL} parallel worst-case searches at the corpus cap (median of ${ROUNDS} rounds)`, async () => {
    expect(chunks).toBeGreaterThan(90_000);
    const query = encodeURIComponent(VOCABULARY.slice(0, 64).join(' '));
    const url = `${server.url}/v1/corpora/${corpusId}/search?q=${query}&k=50`;
    // The workers start and warm their caches with the first search.
    expect((await timed(url)).status).toBe(200);
    // The same polling with no search running: what this machine's scheduling alone costs.
    const idle: number[] = [];
    for (let i = 0; i < 30; i++) idle.push((await timed(`${server.url}/healthz`)).ms);

    // Rounds, and the median of their worst /healthz: on this shared machine one stray stall of
    // another process can land in any single round.
    const rounds: Array<{ worst: number; samples: number; searchMsMax: number }> = [];
    for (let round = 0; round < ROUNDS; round++) {
      const searches = Array.from({ length: PARALLEL }, () => timed(url));
      let done = false;
      const all = Promise.all(searches).finally(() => {
        done = true;
      });
      const healthz: number[] = [];
      while (!done) healthz.push((await timed(`${server.url}/healthz`)).ms);
      const results = await all;
      expect(results.map((r) => r.status)).toEqual(Array(PARALLEL).fill(200));
      rounds.push({
        worst: Math.max(...healthz),
        samples: healthz.length,
        searchMsMax: Math.max(...results.map((r) => r.ms)),
      });
    }
    const worsts = rounds.map((r) => r.worst).sort((a, b) => a - b);
    const worst = worsts[Math.floor(ROUNDS / 2)] as number;
    reportFigures('search-blocking', {
      chunks,
      searches: PARALLEL,
      rounds: ROUNDS,
      searchMsMax: Math.round(Math.max(...rounds.map((r) => r.searchMsMax))),
      healthzSamples: rounds.map((r) => r.samples),
      healthzWorstMsPerRound: rounds.map((r) => Math.round(r.worst * 10) / 10),
      healthzMedianWorstMs: Math.round(worst * 10) / 10,
      healthzIdleWorstMs: Math.round(Math.max(...idle) * 10) / 10,
    });
    for (const round of rounds) expect(round.samples).toBeGreaterThan(3);
    expect(worst).toBeLessThan(HEALTHZ_BAR_MS);

    // One more than the tenant may run at once: refused at once, with retry-after.
    const over = await Promise.all(Array.from({ length: PARALLEL + 1 }, () => timed(url)));
    const refused = over.filter((r) => r.status === 429);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    expect(refused.every((r) => Number(r.retryAfter) >= 1)).toBe(true);
  }, 300_000);
});
