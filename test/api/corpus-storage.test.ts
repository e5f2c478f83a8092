import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chunkText, MAX_DOCUMENT_CHARS, type NewDocument, redactDocument } from '../../src/domain/corpus.js';
import { buildTestApp, type TestApp } from '../support/build-app.js';
import { reportFigures } from '../support/scale.js';
import { tempDir } from '../support/server-process.js';

/**
 * What a corpus costs on disk (docs/retrieval.md#retrieval-corpora): the database's growth over an upload,
 * divided by the UTF-8 bytes of text uploaded (the corpus's `bytes`), at most 1.6. Measured as
 * page_count × page_size after the uploads minus before, on a database file: what the file grows
 * by once its WAL is checkpointed, free pages included (nothing is vacuumed). Chunks stored their
 * text as it was, ~1.14× the document's (the overlap) plus row and index overhead: 1.9×.
 * The uploads go through POST /v1/corpora/{id}/documents; every hit's text must be the chunk the
 * chunker cut (domain/corpus.ts chunkText), byte for byte.
 */

const MAX_RATIO = 1.6;
const TARGET_BYTES = 3 * 1024 * 1024;
/** Per request, well under DOCUMENTS_BODY_LIMIT_BYTES and MAX_DOCUMENTS_PER_REQUEST. */
const BATCH_BYTES = 3 * 1024 * 1024;
const BATCH_DOCUMENTS = 400;

/** mulberry32: the same corpus every run. */
function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Prose over 3 000 made-up words with a Zipf-like frequency (as bench/fts.ts), 3-8 paragraphs a document. */
function generatedCorpus(): NewDocument[] {
  const random = seeded(17);
  const syllables = ['ka', 'lo', 'mi', 'ren', 'sut', 'pra', 'vel', 'dor', 'ix', 'no', 'qua', 'tem', 'bri', 'osh'];
  const vocabulary = Array.from({ length: 3_000 }, (_, i) => {
    let word = '';
    for (let n = i + 3_000; n > 0; n = Math.floor(n / syllables.length)) word += syllables[n % syllables.length];
    return word;
  });
  const word = (): string => vocabulary[Math.floor(3_000 ** random()) - 1] as string;
  const sentence = (): string => `${Array.from({ length: 6 + Math.floor(random() * 12) }, word).join(' ')}.`;
  const paragraph = (): string => Array.from({ length: 3 + Math.floor(random() * 5) }, sentence).join(' ');
  const documents: NewDocument[] = [];
  for (let bytes = 0, i = 0; bytes < TARGET_BYTES; i++) {
    const text = Array.from({ length: 3 + Math.floor(random() * 6) }, paragraph).join('\n\n');
    documents.push({ title: `Generated ${i}`, text });
    bytes += Buffer.byteLength(text);
  }
  return documents;
}

/** Real markdown: this repository's README.md and ARCHITECTURE.md, then the installed packages' README.md in name order, up to TARGET_BYTES (~1.9 MB of them are installed). */
function markdownCorpus(): NewDocument[] {
  const root = join(import.meta.dirname, '../../node_modules');
  const packages = readdirSync(root)
    .sort()
    .flatMap((name) =>
      name.startsWith('@') && !name.includes('.')
        ? readdirSync(join(root, name))
            .sort()
            .map((inner) => `${name}/${inner}`)
        : [name],
    );
  const files = [join(root, '../README.md'), join(root, '../ARCHITECTURE.md')];
  for (const name of packages) files.push(join(root, name, 'README.md'));
  const documents: NewDocument[] = [];
  let bytes = 0;
  for (const file of files) {
    if (bytes >= TARGET_BYTES || !existsSync(file)) continue;
    const text = readFileSync(file, 'utf8').slice(0, MAX_DOCUMENT_CHARS);
    if (text.trim() === '') continue;
    documents.push({ title: file, text });
    bytes += Buffer.byteLength(text);
  }
  return documents;
}

function batches(documents: NewDocument[]): NewDocument[][] {
  const out: NewDocument[][] = [[]];
  let bytes = 0;
  for (const document of documents) {
    const size = Buffer.byteLength(document.text);
    const last = out.at(-1) as NewDocument[];
    if (last.length >= BATCH_DOCUMENTS || (last.length > 0 && bytes + size > BATCH_BYTES)) {
      out.push([document]);
      bytes = size;
    } else {
      last.push(document);
      bytes += size;
    }
  }
  return out;
}

let t: TestApp;
let reader: Database.Database;
const dir = tempDir('baton-corpus-storage-');
beforeAll(async () => {
  t = await buildTestApp({ DATABASE_PATH: dir.dbPath() });
  reader = new Database(dir.dbPath(), { readonly: true });
});
afterAll(async () => {
  reader.close();
  await t.close();
  dir.cleanup();
});

const databaseBytes = (): number =>
  (reader.pragma('page_count', { simple: true }) as number) * (reader.pragma('page_size', { simple: true }) as number);

async function upload(name: string, documents: NewDocument[]): Promise<{ id: string; ratio: number; bytes: number }> {
  const created = await t.app.inject({ method: 'POST', url: '/v1/corpora', payload: { name } });
  expect(created.statusCode, created.body).toBe(201);
  const id = created.json().id as string;
  const before = databaseBytes();
  let bytes = 0;
  for (const batch of batches(documents)) {
    const res = await t.app.inject({
      method: 'POST',
      url: `/v1/corpora/${id}/documents`,
      payload: { documents: batch },
    });
    expect(res.statusCode, res.body).toBe(201);
    bytes = res.json().corpus.bytes as number;
  }
  return { id, bytes, ratio: (databaseBytes() - before) / bytes };
}

/** Every hit of a few searches is the chunk the chunker cut from the (redacted) document uploaded. */
async function expectChunksIntact(id: string, documents: NewDocument[], queries: string[]): Promise<number> {
  const byTitle = new Map(documents.map((d) => [d.title, d]));
  let hits = 0;
  for (const q of queries) {
    const res = await t.app.inject({ method: 'GET', url: `/v1/corpora/${id}/search?q=${encodeURIComponent(q)}&k=50` });
    expect(res.statusCode, res.body).toBe(200);
    for (const hit of res.json().hits as Array<{ title: string; text: string; position: number }>) {
      const document = byTitle.get(hit.title) as NewDocument;
      expect(hit.text).toBe(chunkText(redactDocument(document).text)[hit.position]);
      hits++;
    }
  }
  return hits;
}

describe('corpus storage', () => {
  it(`stores generated prose in at most ${MAX_RATIO}× its text`, async () => {
    const documents = generatedCorpus();
    const { id, bytes, ratio } = await upload('generated', documents);
    const words = (documents[0] as NewDocument).text.split(/\W+/);
    const hits = await expectChunksIntact(id, documents, [words.slice(0, 3).join(' '), words.slice(40, 42).join(' ')]);
    reportFigures('corpus storage, generated', { documents: documents.length, bytes, ratio: ratio.toFixed(3), hits });
    expect(hits).toBeGreaterThan(0);
    expect(ratio).toBeLessThanOrEqual(MAX_RATIO);
  }, 120_000);

  it(`stores markdown documents in at most ${MAX_RATIO}× their text`, async () => {
    const documents = markdownCorpus();
    const { id, bytes, ratio } = await upload('markdown', documents);
    const hits = await expectChunksIntact(id, documents, ['install usage', 'license MIT', 'function returns promise']);
    reportFigures('corpus storage, markdown', { documents: documents.length, bytes, ratio: ratio.toFixed(3), hits });
    expect(bytes).toBeGreaterThan(1024 * 1024);
    expect(hits).toBeGreaterThan(0);
    expect(ratio).toBeLessThanOrEqual(MAX_RATIO);
  }, 120_000);
});
