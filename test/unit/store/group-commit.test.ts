import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Db, openDatabase } from '../../../src/store/sqlite/db.js';
import { createGroupCommitter, type GroupCommitter } from '../../../src/store/sqlite/group-commit.js';
import { tempDir } from '../../support/store-fixtures.js';

/**
 * The writer and an independent reader connection on one WAL file: the reader sees only committed
 * data, so what it sees from inside a write tells whether earlier writes were committed separately.
 */
let writer: Db;
let reader: Database.Database;
let committer: GroupCommitter;
let removeDir: () => void;

beforeEach(() => {
  const temp = tempDir();
  removeDir = temp.remove;
  const path = join(temp.dir, 'baton.db');
  writer = openDatabase(path, { synchronous: 'NORMAL' });
  writer.exec('CREATE TABLE probe (id INTEGER PRIMARY KEY, label TEXT NOT NULL UNIQUE)');
  reader = new Database(path, { readonly: true });
  committer = createGroupCommitter(writer);
});

afterEach(() => {
  reader.close();
  writer.close();
  removeDir();
});

function committedLabels(): string[] {
  return reader.prepare('SELECT label FROM probe ORDER BY id').pluck().all() as string[];
}

function insert(label: string): number {
  return Number(writer.prepare('INSERT INTO probe (label) VALUES (?)').run(label).lastInsertRowid);
}

describe('createGroupCommitter', () => {
  it('commits every write of one event-loop turn in a single transaction', async () => {
    const seenByReader: number[] = [];
    const promises = Array.from({ length: 20 }, (_, i) =>
      committer.run(() => {
        seenByReader.push(committedLabels().length);
        return insert(`w${i}`);
      }),
    );
    expect(committer.pending).toBe(20);
    expect(committedLabels()).toEqual([]);

    const ids = await Promise.all(promises);

    // Had any write committed on its own, a later write would have seen it from the reader.
    expect(seenByReader).toEqual(Array(20).fill(0));
    expect(ids).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(committedLabels()).toHaveLength(20);
    expect(committer.pending).toBe(0);
  });

  it('resolves only after the commit is visible to other connections', async () => {
    const labelsAtResolve = await committer.run(() => insert('durable')).then(() => committedLabels());
    expect(labelsAtResolve).toEqual(['durable']);
  });

  it('writes issued in later turns go into later transactions', async () => {
    await committer.run(() => insert('first'));
    const seen = await committer.run(() => committedLabels());
    expect(seen).toEqual(['first']);
  });

  it('rejects only the bad write of a batch and commits the others', async () => {
    const good = committer.run(() => insert('a'));
    const partial = committer.run(() => {
      insert('half-written');
      throw new Error('boom');
    });
    const duplicate = committer.run(() => insert('a'));
    const alsoGood = committer.run(() => insert('b'));

    const results = await Promise.allSettled([good, partial, duplicate, alsoGood]);

    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled']);
    expect(results[1]).toMatchObject({ reason: { message: 'boom' } });
    expect(results[2]).toMatchObject({ reason: { code: 'SQLITE_CONSTRAINT_UNIQUE' } });
    // The failing write's own partial insert rolled back with it.
    expect(committedLabels()).toEqual(['a', 'b']);
  });

  it('rejects a lone failing write with its own error', async () => {
    await expect(committer.run(() => insert('x')).then(() => committer.run(() => insert('x')))).rejects.toMatchObject({
      code: 'SQLITE_CONSTRAINT_UNIQUE',
    });
  });

  it('flushNow commits the queue synchronously', async () => {
    const promise = committer.run(() => insert('now'));
    committer.flushNow();
    expect(committer.pending).toBe(0);
    expect(committedLabels()).toEqual(['now']);
    await expect(promise).resolves.toBe(1);
  });

  it('uses BEGIN IMMEDIATE so a batch never upgrades a read lock', async () => {
    // A deferred transaction would not take the write lock until its first write; an immediate one
    // holds it from the start, which another writer observes as SQLITE_BUSY.
    const other = new Database(writer.name, { timeout: 0 });
    const outcome = await committer.run(() => {
      try {
        other.prepare('INSERT INTO probe (label) VALUES (?)').run('intruder');
        return 'other writer got in';
      } catch (err) {
        return (err as { code?: string }).code;
      }
    });
    other.close();
    expect(outcome).toBe('SQLITE_BUSY');
  });
});
