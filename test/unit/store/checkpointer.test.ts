import { closeSync, mkdtempSync, openSync, readSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { type Checkpointer, startCheckpointer } from '../../../src/store/sqlite/checkpointer.js';
import { type Db, openDatabase } from '../../../src/store/sqlite/db.js';

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'baton-ckpt-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until the counter reaches `atLeast` (the worker checks every 20 ms here), then a few checks more. */
async function framesOnceAt(checkpointer: Checkpointer, atLeast: number): Promise<number> {
  const deadline = Date.now() + 10_000;
  while (checkpointer.walFrames() < atLeast && Date.now() < deadline) await sleep(5);
  await sleep(100);
  return checkpointer.walFrames();
}

/** The WAL header's salts (bytes 16–23): SQLite changes them each time it restarts the WAL. */
function walSalt(dbPath: string): string {
  const header = Buffer.alloc(32);
  const fd = openSync(`${dbPath}-wal`, 'r');
  try {
    readSync(fd, header, 0, 32, 0);
  } finally {
    closeSync(fd);
  }
  return header.toString('hex', 16, 24);
}

/** Frames in a WAL that was never checkpointed (so never restarted): its file only grows, frame by frame. */
function framesInUncheckpointedWal(dbPath: string, pageSize: number): number {
  return (statSync(`${dbPath}-wal`).size - 32) / (pageSize + 24);
}

/** 100 one-row autocommit inserts, then one transaction of 200 rows of 1 000 bytes. */
function writeBatch(db: Db): void {
  const insert = db.prepare('INSERT INTO filler (blob) VALUES (?)');
  for (let i = 0; i < 100; i++) insert.run(`row ${i}`);
  db.transaction(() => {
    for (let i = 0; i < 200; i++) insert.run('x'.repeat(1000));
  })();
}

describe('background WAL checkpointer', () => {
  it('copies committed WAL frames into the database file off the main thread', async () => {
    const path = join(tempDir(), 'baton.db');
    const db = openDatabase(path, { synchronous: 'NORMAL' });
    const errors: string[] = [];
    const checkpointer = startCheckpointer(db, { path, intervalMs: 20, onError: (m) => errors.push(m) });
    await checkpointer.ready;
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    const before = statSync(path).size;
    db.exec('CREATE TABLE filler (id INTEGER PRIMARY KEY, blob TEXT)');
    const insert = db.prepare('INSERT INTO filler (blob) VALUES (?)');
    db.transaction(() => {
      for (let i = 0; i < 500; i++) insert.run('x'.repeat(1000));
    })();
    const deadline = Date.now() + 5000;
    while (statSync(path).size <= before + 400_000 && Date.now() < deadline) {
      await sleep(20);
    }
    expect(statSync(path).size).toBeGreaterThan(before + 400_000);
    await checkpointer.stop();
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
    db.close();
    expect(errors).toEqual([]);
  });

  it('counts the WAL frames appended by commits, across WAL restarts', async () => {
    const dir = tempDir();
    const path = join(dir, 'baton.db');
    const db = openDatabase(path, { synchronous: 'NORMAL' });
    db.exec('CREATE TABLE filler (id INTEGER PRIMARY KEY, blob TEXT)');
    const errors: string[] = [];
    const checkpointer = startCheckpointer(db, { path, intervalMs: 20, onError: (m) => errors.push(m) });
    await checkpointer.ready;
    // The reference: the same writes on a database whose WAL is never checkpointed, where the frames
    // appended are read off the WAL file's size.
    const controlPath = join(dir, 'control.db');
    const control = new Database(controlPath);
    // Configured as openDatabase configures baton's (auto_vacuum adds pointer-map pages to commits).
    control.pragma('auto_vacuum = INCREMENTAL');
    control.pragma('journal_mode = WAL');
    control.pragma('synchronous = NORMAL');
    control.pragma('wal_autocheckpoint = 0');
    const pageSize = control.pragma('page_size', { simple: true }) as number;
    try {
      control.exec('CREATE TABLE filler (id INTEGER PRIMARY KEY, blob TEXT)');
      // The first check counts what the migrations and the CREATE TABLE left in the WAL.
      const base = await framesOnceAt(checkpointer, 1);
      const controlBase = framesInUncheckpointedWal(controlPath, pageSize);

      writeBatch(db);
      writeBatch(control);
      const expectedFirst = framesInUncheckpointedWal(controlPath, pageSize) - controlBase;
      expect(expectedFirst).toBeGreaterThan(150);
      expect((await framesOnceAt(checkpointer, base + expectedFirst)) - base).toBe(expectedFirst);

      // The check that counted the last frames also copied them back, so the next commit restarts the WAL.
      const saltBefore = walSalt(path);
      writeBatch(db);
      writeBatch(control);
      expect(walSalt(path)).not.toBe(saltBefore);
      const expected = framesInUncheckpointedWal(controlPath, pageSize) - controlBase;
      expect((await framesOnceAt(checkpointer, base + expected)) - base).toBe(expected);
    } finally {
      control.close();
      await checkpointer.stop();
      db.close();
    }
    expect(errors).toEqual([]);
  });
});
