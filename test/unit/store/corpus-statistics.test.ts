import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createSqliteCorpusStore, type SqliteCorpusStore } from '../../../src/store/sqlite/corpora.repo.js';
import { type Db, openDatabase } from '../../../src/store/sqlite/db.js';
import { createGroupCommitter } from '../../../src/store/sqlite/group-commit.js';

/**
 * Ranking statistics are per corpus: another tenant's uploads, or another corpus
 * of the same tenant, change no score and no order of a search, and so tell nothing about what the
 * others hold. Over an in-memory database (searched in-thread) and a file database (searched by the
 * worker): both paths rank the same way.
 */

const opened: Array<{ db: Db; store: SqliteCorpusStore; dir?: string }> = [];
function open(kind: 'memory' | 'file'): { db: Db; store: SqliteCorpusStore } {
  const dir = kind === 'file' ? mkdtempSync(path.join(tmpdir(), 'baton-stats-')) : undefined;
  const dbPath = dir === undefined ? ':memory:' : path.join(dir, 'baton.db');
  const db = openDatabase(dbPath, { synchronous: 'NORMAL' });
  const store = createSqliteCorpusStore(db, createGroupCommitter(db), {
    now: () => 1_700_000_000_000,
    onError: (err) => {
      throw err;
    },
    databasePath: dbPath,
  });
  opened.push({ db, store, ...(dir === undefined ? {} : { dir }) });
  return { db, store };
}
afterEach(async () => {
  for (const { db, store, dir } of opened.splice(0)) {
    await store.close();
    store.stop();
    db.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  }
});

const A_DOCUMENTS = [
  { title: 'Deploys', text: 'Deploys run from the main branch. Roll back a deploy with the previous release tag.' },
  { title: 'Rollback', text: 'A rollback restores the previous release; a deploy freeze stops every deploy.' },
  { title: 'Incidents', text: 'The incident commander writes the timeline and the follow-up actions.' },
  { title: 'Lunch', text: 'The cafeteria serves soup on Mondays and pasta on Fridays.' },
  { title: 'Parking', text: 'Visitors park on level two; badges open the gate after six.' },
  { title: 'Laptops', text: 'Laptops are renewed every three years by the help desk.' },
  { title: 'Holidays', text: 'Holidays are booked in the calendar two weeks ahead.' },
  { title: 'Security', text: 'Report a lost badge to security within one hour.' },
];
const QUERY = 'how do I roll back a deploy to the previous release';

/** Documents full of A's query words: were statistics shared, they would move A's scores and order. */
const flood = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    text: `deploy deploy release previous roll back deploy ${i} the a how do I to release release`,
  }));

describe.each(['memory', 'file'] as const)('per-corpus ranking statistics (%s database)', (kind) => {
  it("another tenant's uploads and another corpus of the same tenant change no score of a search", async () => {
    const { db, store } = open(kind);
    const a = await store.create('a', { name: 'handbook' });
    await store.addDocuments('a', a.id, A_DOCUMENTS);
    const before = JSON.stringify(await store.search('a', a.id, QUERY, 10));
    const rareBefore = JSON.stringify(await store.search('a', a.id, 'cafeteria incident', 10));
    expect(JSON.parse(before).length).toBeGreaterThan(1);

    const b = await store.create('b', { name: 'handbook' });
    await store.addDocuments('b', b.id, flood(400));
    // Words A's corpus holds once: were document frequencies shared, B could tell A holds them.
    await store.addDocuments('b', b.id, [{ text: 'cafeteria cafeteria incident incident' }]);
    expect(JSON.stringify(await store.search('a', a.id, QUERY, 10))).toBe(before);
    expect(JSON.stringify(await store.search('a', a.id, 'cafeteria incident', 10))).toBe(rareBefore);

    const a2 = await store.create('a', { name: 'other' });
    await store.addDocuments('a', a2.id, flood(300));
    expect(JSON.stringify(await store.search('a', a.id, QUERY, 10))).toBe(before);
    expect(JSON.stringify(await store.search('a', a.id, 'cafeteria incident', 10))).toBe(rareBefore);

    // Deleting the others' corpora (and their purge) changes nothing either.
    await store.delete('b', b.id);
    await store.delete('a', a2.id);
    await vi.waitFor(() => expect(db.prepare('SELECT count(*) FROM corpus_purges').pluck().get()).toBe(0));
    expect(JSON.stringify(await store.search('a', a.id, QUERY, 10))).toBe(before);
  });
});
